// Transcriptions: create one from an uploaded file or a URL (model, language hints, context terms, diarization,
// translation); the list polls while any job is still running, so status changes show as they happen.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { loadSttModels, modelChoices, splitList, translationChoices, translationOf } from '../lib/models.js';
import { Alert, Field, formatDate, hintId, Section, SelectField, useInterval, useLoad } from '../lib/ui.js';
import type { FileRecord } from './files.js';

export interface Transcription {
  id: string;
  status: 'queued' | 'downloading' | 'transcribing' | 'completed' | 'failed';
  created_at: string;
  model: string;
  audio_url: string | null;
  file_id: string | null;
  filename: string;
  error_type: string | null;
  error_message: string | null;
  audio_duration_ms: number;
  enable_speaker_diarization: boolean;
  translation: Record<string, unknown> | null;
}

export const running = (t: Transcription): boolean => t.status !== 'completed' && t.status !== 'failed';

const POLL_MS = 1000;

function CreateForm({ onCreated }: { onCreated: (t: Transcription) => void }) {
  const preselected = new URLSearchParams(location.hash.split('?')[1] ?? '').get('file') ?? '';
  const models = useLoad(() => loadSttModels('async'));
  const files = useLoad(() => api<{ files: FileRecord[] }>('/v1/files', { query: { limit: 100 } }));
  const [source, setSource] = useState<'file' | 'url'>('file');
  const [fileId, setFileId] = useState(preselected);
  const [url, setUrl] = useState('');
  const [model, setModel] = useState('');
  const [hints, setHints] = useState('');
  const [terms, setTerms] = useState('');
  const [diarize, setDiarize] = useState(false);
  const [translation, setTranslation] = useState('none');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const chosenModel = models.data?.find((m) => m.id === model) ?? models.data?.[0];
  const firstFile = files.data?.files[0]?.id ?? '';

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const contextTerms = splitList(terms, /\n|,/);
      const t = await api<Transcription>('/v1/transcriptions', {
        method: 'POST',
        json: {
          model: chosenModel?.id,
          ...(source === 'file' ? { file_id: fileId || firstFile } : { audio_url: url }),
          ...(hints.trim() ? { language_hints: splitList(hints) } : {}),
          ...(contextTerms.length ? { context: { terms: contextTerms } } : {}),
          enable_speaker_diarization: diarize,
          ...(translationOf(translation) ? { translation: translationOf(translation) } : {}),
        },
      });
      setError(null);
      onCreated(t);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} class="form-grid">
      <fieldset>
        <legend>Audio source</legend>
        <label class="inline">
          <input type="radio" name="source" checked={source === 'file'} onChange={() => setSource('file')} /> Uploaded file
        </label>
        <label class="inline">
          <input type="radio" name="source" checked={source === 'url'} onChange={() => setSource('url')} /> Audio URL
        </label>
      </fieldset>
      {source === 'file' ? (
        <SelectField
          id="transcriptions-file"
          label="File"
          value={fileId || firstFile}
          choices={files.data?.files.map((f) => ({ value: f.id, label: f.filename })) ?? []}
          onChange={setFileId}
          required
        />
      ) : (
        <Field id="transcriptions-audio-url" label="Audio URL">
          <input
            id="transcriptions-audio-url"
            type="url"
            required
            value={url}
            placeholder="https://example.com/audio.mp3"
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </Field>
      )}
      <SelectField id="transcriptions-model" label="Model" value={chosenModel?.id ?? ''} choices={modelChoices(models.data)} onChange={setModel} />
      <Field
        id="transcriptions-language-hints"
        label="Language hints"
        hint={`Language codes, comma separated. ${chosenModel ? `This model knows: ${chosenModel.languages.map((l) => l.code).join(', ')}.` : ''}`}
      >
        <input
          id="transcriptions-language-hints"
          value={hints}
          placeholder="en, es"
          onInput={(e) => setHints(e.currentTarget.value)}
          aria-describedby={hintId('transcriptions-language-hints')}
        />
      </Field>
      <Field id="transcriptions-context-terms" label="Context terms">
        <textarea
          id="transcriptions-context-terms"
          rows={2}
          value={terms}
          placeholder="One term per line: names, jargon"
          onInput={(e) => setTerms(e.currentTarget.value)}
        />
      </Field>
      <label class="inline">
        <input type="checkbox" checked={diarize} onChange={(e) => setDiarize(e.currentTarget.checked)} /> Speaker diarization
      </label>
      <SelectField
        id="transcriptions-translation"
        label="Translation"
        value={translation}
        choices={translationChoices(chosenModel)}
        onChange={setTranslation}
      />
      <div>
        <button type="submit" disabled={busy || !chosenModel}>
          Start transcription
        </button>
      </div>
      <Alert error={models.error ?? files.error ?? error} />
    </form>
  );
}

export function TranscriptionsView() {
  const list = useLoad(() => api<{ transcriptions: Transcription[] }>('/v1/transcriptions', { query: { limit: 50 } }));
  const [actionError, setActionError] = useState<unknown>(null);
  const anyRunning = useMemo(() => list.data?.transcriptions.some(running) ?? false, [list.data]);
  useInterval(list.reload, POLL_MS, anyRunning);
  useEffect(() => setActionError(null), [list.data]);

  const remove = async (t: Transcription) => {
    if (!confirm(`Delete the transcription of ${t.filename}?`)) return;
    try {
      await api(`/v1/transcriptions/${t.id}`, { method: 'DELETE' });
      list.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  return (
    <>
      <h1>Transcriptions</h1>
      <Section title="New transcription">
        <CreateForm onCreated={() => list.reload()} />
      </Section>
      <Section title="Recent transcriptions">
        <Alert error={list.error ?? actionError} />
        {list.data?.transcriptions.length === 0 && <p>No transcriptions yet.</p>}
        <ul class="rows" aria-label="Transcriptions">
          {list.data?.transcriptions.map((t) => (
            <li key={t.id}>
              <span class="name">{t.filename}</span>
              <span class={`status status-${t.status}`} aria-label={`Status of ${t.filename}`}>
                {t.status}
              </span>
              <span class="meta">
                {t.model} · {formatDate(t.created_at)}
                {t.error_message ? ` · ${t.error_type}: ${t.error_message}` : ''}
              </span>
              <span class="actions">
                {t.status === 'completed' && (
                  <a class="button secondary" href={`#/transcriptions/${t.id}`} aria-label={`Open transcript of ${t.filename}`}>
                    Open transcript
                  </a>
                )}
                {t.status !== 'transcribing' && (
                  <button type="button" class="danger" aria-label={`Delete transcription of ${t.filename}`} onClick={() => void remove(t)}>
                    Delete
                  </button>
                )}
              </span>
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
