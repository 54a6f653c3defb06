// The server's models (a key with models:admin): installed models and pulls with their state, a pull from the
// catalogue with its progress, removal, and aliases. The server serves a ready model at once: no restart.
import { useMemo, useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { Alert, Field, formatBytes, Section, SelectField, useInterval, useLoad } from '../lib/ui.js';

export interface ModelRecord {
  id: string;
  status: 'downloading' | 'installing' | 'ready' | 'failed';
  source: string | null;
  family: string;
  type: string;
  name: string | null;
  aliases: string[];
  size_bytes: number | null;
  progress: { bytes_received: number; bytes_total: number | null } | null;
  error_type: string | null;
  error_message: string | null;
  loaded: boolean;
}

interface CatalogueEntry {
  name: string;
  title: string;
  family: string;
  type: string;
  size_mb: number | null;
  id: string;
  installed: boolean;
}

const pulling = (m: ModelRecord) => m.status === 'downloading' || m.status === 'installing';

export function ModelsView() {
  const list = useLoad(() => api<{ models: ModelRecord[]; catalogue: CatalogueEntry[] }>('/v1/admin/models'));
  const [chosen, setChosen] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [aliases, setAliases] = useState<Record<string, string>>({});
  const busy = useMemo(() => list.data?.models.some(pulling) ?? false, [list.data]);
  useInterval(list.reload, 1000, busy);
  const available = list.data?.catalogue.filter((e) => !e.installed && !list.data?.models.some((m) => m.id === e.id && pulling(m))) ?? [];
  // The chosen name while it is still to be had (a pulled one leaves the list), else the first.
  const choice = available.some((e) => e.name === chosen) ? chosen : (available[0]?.name ?? '');

  const act = async (what: () => Promise<unknown>) => {
    try {
      setError(null);
      await what();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  const pull = (e: Event) => {
    e.preventDefault();
    if (choice) void act(() => api('/v1/admin/models', { method: 'POST', json: { source: choice } }));
  };

  return (
    <>
      <h1>Models</h1>
      <Section title="Pull from the catalogue">
        <form onSubmit={pull} class="form-grid">
          <SelectField
            id="models-catalogue"
            label="Catalogue model"
            value={choice}
            onChange={setChosen}
            choices={available.map((e) => ({
              value: e.name,
              label: `${e.title} (${e.family} ${e.type}${e.size_mb === null ? '' : `, ${Math.round(e.size_mb)} MB`})`,
            }))}
          />
          <div>
            <button type="submit" disabled={!choice}>
              Pull
            </button>
          </div>
        </form>
      </Section>
      <Section title="Installed models">
        <Alert error={list.error ?? error} />
        {list.data?.models.length === 0 && <p>No models brought yet: the built-in engines serve every request.</p>}
        <ul class="rows" aria-label="Installed models">
          {list.data?.models.map((m) => {
            const total = m.progress?.bytes_total ?? null;
            return (
              <li key={m.id}>
                <span class="name">{m.id}</span>
                <span class="meta">
                  {m.family} {m.type}
                  {m.size_bytes !== null && ` · ${formatBytes(m.size_bytes)}`}
                  {m.status === 'ready' && (m.loaded ? ' · loaded' : ' · not loaded')}
                </span>
                <span class={`status status-${m.status}`} aria-label={`${m.id} status`}>
                  {m.status}
                </span>
                {m.status === 'downloading' && (
                  <progress
                    aria-label={`Downloading ${m.id}`}
                    max={total ?? undefined}
                    value={total === null ? undefined : (m.progress?.bytes_received ?? 0)}
                  />
                )}
                {m.error_message && (
                  <span class="meta">
                    {' '}
                    {m.error_type}: {m.error_message}
                  </span>
                )}
                {m.status === 'ready' && (
                  <form
                    class="inline"
                    onSubmit={(e) => {
                      e.preventDefault();
                      const next = (aliases[m.id] ?? m.aliases.join(', '))
                        .split(/[\s,]+/)
                        .map((a) => a.trim())
                        .filter(Boolean);
                      void act(() => api(`/v1/admin/models/${encodeURIComponent(m.id)}/aliases`, { method: 'PUT', json: { aliases: next } }));
                    }}
                  >
                    <Field id={`models-aliases-${m.id}`} label={`Aliases of ${m.id}`}>
                      <input
                        id={`models-aliases-${m.id}`}
                        value={aliases[m.id] ?? m.aliases.join(', ')}
                        placeholder="stt-rt-v4, ..."
                        onInput={(e) => setAliases({ ...aliases, [m.id]: e.currentTarget.value })}
                      />
                    </Field>
                    <button type="submit" class="secondary">
                      Save aliases<span class="visually-hidden"> of {m.id}</span>
                    </button>
                  </form>
                )}
                {!pulling(m) && (
                  <span class="actions">
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Remove ${m.id}`}
                      onClick={() =>
                        confirm(`Remove the model ${m.id}?`) && void act(() => api(`/v1/admin/models/${encodeURIComponent(m.id)}`, { method: 'DELETE' }))
                      }
                    >
                      Remove
                    </button>
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      </Section>
    </>
  );
}
