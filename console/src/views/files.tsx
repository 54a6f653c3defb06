// Files: upload several at once (picker or drag and drop) with a progress bar each; list with paging; count; delete.
import { useState } from 'preact/hooks';
import { api, upload } from '../lib/api.js';
import { rememberAudio } from '../lib/local-audio.js';
import { Alert, formatBytes, formatDate, Section, useLoad } from '../lib/ui.js';

export interface FileRecord {
  id: string;
  filename: string;
  size: number;
  created_at: string;
}

interface Upload {
  name: string;
  progress: number;
  error?: unknown;
  done?: boolean;
}

const PAGE_SIZES = [10, 25, 100];

export function FilesView() {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dragging, setDragging] = useState(false);
  const [pageSize, setPageSize] = useState(10);
  // Cursors of the pages seen so far: [undefined] is the first page.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const list = useLoad(
    () => api<{ files: FileRecord[]; next_page_cursor: string | null }>('/v1/files', { query: { limit: pageSize, cursor } }),
    [pageSize, cursor],
  );
  const count = useLoad(() => api<{ total: number; playground: number; public_api: number }>('/v1/files/count'));
  const [actionError, setActionError] = useState<unknown>(null);

  const refresh = () => {
    list.reload();
    count.reload();
  };

  const uploadAll = async (files: File[]) => {
    if (!files.length) return;
    const start = uploads.length;
    setUploads((u) => [...u, ...files.map((f) => ({ name: f.name, progress: 0 }))]);
    const update = (i: number, patch: Partial<Upload>) => setUploads((u) => u.map((x, j) => (j === start + i ? { ...x, ...patch } : x)));
    await Promise.all(
      files.map(async (file, i) => {
        const form = new FormData();
        form.append('file', file, file.name);
        try {
          const rec = await upload<FileRecord>('/v1/files', form, (progress) => update(i, { progress }));
          rememberAudio(rec.id, file);
          update(i, { done: true });
        } catch (error) {
          update(i, { error });
        }
      }),
    );
    refresh();
  };

  const remove = async (f: FileRecord) => {
    if (!confirm(`Delete ${f.filename}? This cannot be undone.`)) return;
    try {
      await api(`/v1/files/${f.id}`, { method: 'DELETE' });
      setActionError(null);
      refresh();
    } catch (err) {
      setActionError(err);
    }
  };

  return (
    <>
      <h1>Files</h1>
      <Section title="Upload audio">
        <div
          class={`drop-zone${dragging ? ' dragging' : ''}`}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            void uploadAll([...(e.dataTransfer?.files ?? [])]);
          }}
        >
          <p>Drop audio files here, or</p>
          <label for="file-picker" class="button">
            Choose audio files
          </label>
          <input
            id="file-picker"
            class="visually-hidden"
            type="file"
            multiple
            accept="audio/*,video/*"
            onChange={(e) => {
              void uploadAll([...(e.currentTarget.files ?? [])]);
              e.currentTarget.value = '';
            }}
          />
        </div>
        {uploads.length > 0 && (
          <ul class="uploads" aria-label="Uploads">
            {uploads.map((u, i) => (
              <li key={i}>
                <span class="name">{u.name}</span>
                <progress aria-label={`Uploading ${u.name}`} max={1} value={u.progress} />
                <span aria-live="polite">{u.error ? 'failed' : u.done ? 'uploaded' : `${Math.round(u.progress * 100)}%`}</span>
                <Alert error={u.error} />
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section title="Your files">
        {count.data && (
          <p class="counts" aria-live="polite">
            <strong>{count.data.total}</strong> files: {count.data.playground} from the playground, {count.data.public_api} from the API
          </p>
        )}
        <Alert error={list.error ?? count.error ?? actionError} />
        {list.data && list.data.files.length === 0 && <p>No files yet.</p>}
        {list.data && list.data.files.length > 0 && (
          <ul class="rows" aria-label="Files">
            {list.data.files.map((f) => (
              <li key={f.id}>
                <span class="name">{f.filename}</span>
                <span class="meta">
                  {formatBytes(f.size)} · {formatDate(f.created_at)}
                </span>
                <span class="actions">
                  <a class="button secondary" href={`#/transcriptions?file=${f.id}`}>
                    Transcribe
                  </a>
                  <button type="button" class="danger" aria-label={`Delete ${f.filename}`} onClick={() => void remove(f)}>
                    Delete
                  </button>
                </span>
              </li>
            ))}
          </ul>
        )}
        <div class="pager">
          <div class="field">
            <label for="files-per-page">Per page</label>
            <select
              id="files-per-page"
              value={pageSize}
              onChange={(e) => {
                setPageSize(Number(e.currentTarget.value));
                setCursors([undefined]);
              }}
            >
              {PAGE_SIZES.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </div>
          <button type="button" disabled={cursors.length < 2} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Previous page
          </button>
          <span>Page {cursors.length}</span>
          <button type="button" disabled={!list.data?.next_page_cursor} onClick={() => setCursors((c) => [...c, list.data!.next_page_cursor!])}>
            Next page
          </button>
        </div>
      </Section>
    </>
  );
}
