// Cloned voices: upload a reference clip, watch each TTS model's preparation status, and try a ready voice.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, upload } from '../lib/api.js';
import { loadTtsModels, synthesize } from '../lib/tts.js';
import { Alert, Field, formatDate, hintId, Section, useInterval, useLoad } from '../lib/ui.js';

export interface ClonedVoice {
  id: string;
  name: string;
  filename: string;
  created_at: string;
  models: {
    model: string;
    status: 'not_computed' | 'processing' | 'ready' | 'failed';
    error_type: string | null;
    error_message: string | null;
    base_voice: string | null;
  }[];
}

const TRY_TEXT = 'This is my cloned voice, speaking through Parlance.';

export function VoicesView() {
  const list = useLoad(() => api<{ voices: ClonedVoice[] }>('/v1/voices', { query: { limit: 100 } }));
  const models = useLoad(loadTtsModels);
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [audioUrl, setAudioUrl] = useState<string | null>(null);
  const [trying, setTrying] = useState('');
  const audio = useRef<HTMLAudioElement>(null);
  const processing = useMemo(() => list.data?.voices.some((v) => v.models.some((m) => m.status === 'processing')) ?? false, [list.data]);
  useInterval(list.reload, 1000, processing);
  useEffect(() => {
    if (audioUrl) void audio.current?.play();
  }, [audioUrl]);

  const create = async (e: Event) => {
    e.preventDefault();
    if (!file) return;
    const form = new FormData();
    form.append('name', name.trim());
    form.append('file', file, file.name);
    setError(null);
    try {
      await upload('/v1/voices', form, setProgress);
      setName('');
      list.reload();
    } catch (err) {
      setError(err);
    } finally {
      setProgress(null);
    }
  };

  const act = async (what: () => Promise<unknown>) => {
    try {
      setError(null);
      await what();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  const tryVoice = async (v: ClonedVoice, model: string) => {
    setTrying(`${v.id}:${model}`);
    await act(async () => {
      const language =
        models.data?.find((m) => m.id === model)?.languages.find((l) => l.code === 'en')?.code ??
        models.data?.find((m) => m.id === model)?.languages[0]?.code ??
        'en';
      const blob = await synthesize({ model, language, voice: v.id, text: TRY_TEXT, audio_format: 'wav' });
      if (audioUrl) URL.revokeObjectURL(audioUrl);
      setAudioUrl(URL.createObjectURL(blob));
    });
    setTrying('');
  };

  return (
    <>
      <h1>Cloned voices</h1>
      <Section title="New cloned voice">
        <form onSubmit={create} class="form-grid">
          <Field id="voices-voice-name" label="Voice name">
            <input id="voices-voice-name" required maxLength={128} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field id="voices-reference-clip" label="Reference clip" hint="Up to 2 minutes of one speaker.">
            <input
              id="voices-reference-clip"
              type="file"
              required
              accept="audio/*"
              onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
              aria-describedby={hintId('voices-reference-clip')}
            />
          </Field>
          <div>
            <button type="submit" disabled={!file || !name.trim() || progress !== null}>
              Create voice
            </button>
            {progress !== null && <progress aria-label="Uploading the reference clip" max={1} value={progress} />}
          </div>
        </form>
      </Section>
      <Section title="Your cloned voices">
        <Alert error={list.error ?? models.error ?? error} />
        {list.data?.voices.length === 0 && <p>No cloned voices yet.</p>}
        <ul class="rows" aria-label="Cloned voices">
          {list.data?.voices.map((v) => (
            <li key={v.id}>
              <span class="name">{v.name}</span>
              <span class="meta">
                {v.filename} · {formatDate(v.created_at)}
              </span>
              <ul class="model-status" aria-label={`Models for ${v.name}`}>
                {v.models.map((m) => (
                  <li key={m.model}>
                    <span>{m.model}</span>{' '}
                    <span class={`status status-${m.status}`} aria-label={`${v.name} on ${m.model}`}>
                      {m.status.replace('_', ' ')}
                    </span>
                    {m.error_message && <span class="meta"> {m.error_message}</span>}
                    {m.status === 'ready' && (
                      <button type="button" class="secondary" disabled={!!trying} onClick={() => void tryVoice(v, m.model)}>
                        {/* The visible word starts the accessible name (axe: label-content-name-mismatch). */}
                        {trying === `${v.id}:${m.model}` ? 'Synthesizing…' : 'Try'}
                        <span class="visually-hidden">
                          {' '}
                          {v.name} on {m.model}
                        </span>
                      </button>
                    )}
                    {m.status === 'not_computed' && (
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => void act(() => api(`/v1/voices/${v.id}/recompute`, { method: 'POST', json: { model: m.model } }))}
                      >
                        Prepare
                      </button>
                    )}
                  </li>
                ))}
              </ul>
              <span class="actions">
                <button
                  type="button"
                  class="danger"
                  aria-label={`Delete ${v.name}`}
                  onClick={() => confirm(`Delete the voice ${v.name}?`) && void act(() => api(`/v1/voices/${v.id}`, { method: 'DELETE' }))}
                >
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
        {audioUrl && <audio ref={audio} controls src={audioUrl} aria-label="Cloned voice sample" />}
      </Section>
    </>
  );
}
