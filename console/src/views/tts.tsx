// Text-to-speech playground: models and their shared voices (with the listing's filters) plus ready cloned voices;
// speed and format; play or download over HTTP, or stream over /tts-websocket and hear audio as it is synthesized.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, saveBlob, temporaryKey, wsUrl } from '../lib/api.js';
import { base64Bytes, PcmPlayer } from '../lib/pcm-player.js';
import { AUDIO_FORMATS, extensionOf, loadTtsModels, playable, synthesize } from '../lib/tts.js';
import { Alert, Field, Section, SelectField, useLoad } from '../lib/ui.js';
import type { ClonedVoice } from './voices.js';

interface SharedVoice {
  id: string;
  description: string;
  gender: string;
  age: string;
  accent: string;
  use_case: string[];
  style: string[];
}

interface Filters {
  gender: string;
  age: string;
  accent: string;
  use_case: string;
  style: string;
}

const STREAM_RATE = 24000;
const SAMPLE_TEXT = 'Hello from Parlance. This speech was synthesized on your own server. Streaming plays each sentence as soon as it is ready.';

interface StreamReport {
  chunks: number;
  firstAudioMs: number | null;
  synthesisEndMs: number | null;
}

export function TtsView() {
  const models = useLoad(loadTtsModels);
  const cloned = useLoad(() => api<{ voices: ClonedVoice[] }>('/v1/voices', { query: { limit: 100 } }));
  const [modelId, setModelId] = useState('');
  const model = models.data?.find((m) => m.id === modelId) ?? models.data?.[0];
  const [language, setLanguage] = useState('');
  const lang =
    model?.languages.find((l) => l.code === language)?.code ?? model?.languages.find((l) => l.code === 'en')?.code ?? model?.languages[0]?.code ?? '';
  const [filters, setFilters] = useState<Filters>({ gender: '', age: '', accent: '', use_case: '', style: '' });
  const voices = useLoad(
    async () =>
      model
        ? (
            await api<{ voices: SharedVoice[] }>('/v1/tts-voices', {
              query: { model: model.id, language: lang, ...filters, use_case: filters.use_case || undefined, style: filters.style || undefined, limit: 200 },
            })
          ).voices
        : [],
    [model?.id, lang, JSON.stringify(filters)],
  );
  const readyClones = (cloned.data?.voices ?? []).filter((v) => v.models.some((m) => m.model === model?.id && m.status === 'ready'));
  const [voice, setVoice] = useState('');
  const voiceIds = [...(voices.data ?? []).map((v) => v.id), ...readyClones.map((v) => v.id)];
  const chosenVoice = voiceIds.includes(voice) ? voice : (voiceIds[0] ?? '');
  const [text, setText] = useState(SAMPLE_TEXT);
  const [speed, setSpeed] = useState(1);
  const [format, setFormat] = useState('wav');
  const [busy, setBusy] = useState<'' | 'play' | 'download' | 'stream'>('');
  const [error, setError] = useState<unknown>(null);
  const [audioUrl, setAudioUrl] = useState<string | null>(null);
  const [report, setReport] = useState<StreamReport | null>(null);
  const audio = useRef<HTMLAudioElement>(null);

  useEffect(() => {
    if (audioUrl) void audio.current?.play();
  }, [audioUrl]);

  const speech = () => ({ model: model!.id, language: lang, voice: chosenVoice, text, speed });

  const playOrDownload = async (what: 'play' | 'download') => {
    setBusy(what);
    setError(null);
    try {
      const blob = await synthesize({ ...speech(), audio_format: what === 'play' && !playable(format) ? 'wav' : format });
      if (what === 'download') saveBlob(blob, `speech.${extensionOf(format)}`);
      else {
        if (audioUrl) URL.revokeObjectURL(audioUrl);
        setAudioUrl(URL.createObjectURL(blob));
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy('');
    }
  };

  const stream = async () => {
    setBusy('stream');
    setError(null);
    const started = performance.now();
    const rep: StreamReport = { chunks: 0, firstAudioMs: null, synthesisEndMs: null };
    setReport({ ...rep });
    const player = new PcmPlayer(STREAM_RATE);
    try {
      const key = await temporaryKey('tts_rt');
      const ws = new WebSocket(wsUrl('/tts-websocket'));
      const streamId = crypto.randomUUID();
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => {
          ws.send(JSON.stringify({ ...speech(), api_key: key, audio_format: 'pcm_s16le', sample_rate: STREAM_RATE, stream_id: streamId }));
          // Sentence by sentence, as a chat reply would arrive; the server synthesizes as text comes in.
          const parts = text.match(/[^.!?]+[.!?]*\s*/g) ?? [text];
          parts.forEach((p, i) => ws.send(JSON.stringify({ text: p, text_end: i === parts.length - 1, stream_id: streamId })));
        };
        ws.onmessage = (e: MessageEvent<string>) => {
          const f = JSON.parse(e.data) as { audio?: string; audio_end?: boolean; terminated?: boolean; error_type?: string; error_message?: string };
          if (f.error_type) reject(new Error(`${f.error_message ?? ''} (${f.error_type})`));
          if (f.audio) {
            player.push(base64Bytes(f.audio));
            rep.chunks++;
            rep.firstAudioMs ??= Math.round((player.firstPlayedAt ?? performance.now()) - started);
          }
          if (f.audio_end) rep.synthesisEndMs = Math.round(performance.now() - started);
          setReport({ ...rep });
          if (f.terminated) {
            ws.close();
            resolve();
          }
        };
        ws.onerror = () => reject(new Error('Could not stream over /tts-websocket.'));
      });
      await player.drained();
    } catch (err) {
      setError(err);
    } finally {
      await player.close();
      setBusy('');
    }
  };

  const setFilter = (k: keyof Filters) => (e: Event) => setFilters((f) => ({ ...f, [k]: (e.currentTarget as HTMLInputElement).value }));

  return (
    <>
      <h1>Text to speech</h1>
      <Section title="Model and voice">
        <div class="form-grid">
          <SelectField
            id="tts-model"
            label="Model"
            value={model?.id ?? ''}
            choices={models.data?.map((m) => ({ value: m.id, label: m.aliased_model_id ? `${m.name} (alias of ${m.aliased_model_id})` : m.name })) ?? []}
            onChange={setModelId}
          />
          <SelectField
            id="tts-language"
            label="Language"
            value={lang}
            choices={model?.languages.map((l) => ({ value: l.code, label: `${l.name} (${l.code})` })) ?? []}
            onChange={setLanguage}
          />
        </div>
        <fieldset class="filters">
          <legend>Filter shared voices</legend>
          <div class="field">
            <label for="tts-gender">Gender</label>
            <select id="tts-gender" value={filters.gender} onChange={setFilter('gender')}>
              <option value="">Any</option>
              <option value="female">Female</option>
              <option value="male">Male</option>
              <option value="neutral">Neutral</option>
            </select>
          </div>
          <div class="field">
            <label for="tts-age">Age</label>
            <select id="tts-age" value={filters.age} onChange={setFilter('age')}>
              <option value="">Any</option>
              <option value="young">Young</option>
              <option value="middle_aged">Middle aged</option>
              <option value="old">Old</option>
            </select>
          </div>
          <Field id="tts-accent" label="Accent">
            <input id="tts-accent" value={filters.accent} maxLength={40} onChange={setFilter('accent')} />
          </Field>
          <Field id="tts-use-case" label="Use case">
            <input id="tts-use-case" value={filters.use_case} maxLength={40} onChange={setFilter('use_case')} />
          </Field>
          <Field id="tts-style" label="Style">
            <input id="tts-style" value={filters.style} maxLength={40} onChange={setFilter('style')} />
          </Field>
        </fieldset>
        <Alert error={models.error ?? voices.error ?? cloned.error} />
        <fieldset class="voices">
          <legend>Voice</legend>
          {voiceIds.length === 0 && <p>No voice matches these filters.</p>}
          <ul>
            {voices.data?.map((v) => (
              <li key={v.id}>
                <label class="voice">
                  <input type="radio" name="voice" value={v.id} checked={chosenVoice === v.id} onChange={() => setVoice(v.id)} />
                  <span>
                    <strong>{v.id}</strong> · {v.gender}, {v.age.replace('_', ' ')}
                    {v.accent ? `, ${v.accent}` : ''}
                    <span class="meta">
                      {v.description}
                      {v.use_case.length ? ` · ${v.use_case.join(', ')}` : ''}
                      {v.style.length ? ` · ${v.style.join(', ')}` : ''}
                    </span>
                  </span>
                </label>
              </li>
            ))}
            {readyClones.map((v) => (
              <li key={v.id}>
                <label class="voice">
                  <input type="radio" name="voice" value={v.id} checked={chosenVoice === v.id} onChange={() => setVoice(v.id)} />
                  <span>
                    <strong>{v.name}</strong> · cloned voice
                  </span>
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
      </Section>
      <Section title="Speech">
        <div class="form-grid">
          <Field id="tts-text" label="Text" wide>
            <textarea id="tts-text" rows={4} value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </Field>
          <Field id="speed" label="Speed">
            <input
              id="speed"
              type="range"
              min={0.7}
              max={1.3}
              step={0.05}
              value={speed}
              aria-valuetext={`${speed.toFixed(2)} times`}
              onInput={(e) => setSpeed(Number(e.currentTarget.value))}
            />
            <output for="speed">{speed.toFixed(2)}×</output>
          </Field>
          <SelectField id="tts-format" label="Format" value={format} choices={AUDIO_FORMATS.map((f) => ({ value: f, label: f }))} onChange={setFormat} />
        </div>
        <div class="button-row">
          <button type="button" disabled={!!busy || !chosenVoice || !text.trim()} onClick={() => void playOrDownload('play')}>
            {busy === 'play' ? 'Synthesizing…' : 'Play'}
          </button>
          <button type="button" class="secondary" disabled={!!busy || !chosenVoice || !text.trim()} onClick={() => void playOrDownload('download')}>
            Download
          </button>
          <button type="button" class="secondary" disabled={!!busy || !chosenVoice || !text.trim()} onClick={() => void stream()}>
            {busy === 'stream' ? 'Streaming…' : 'Stream'}
          </button>
        </div>
        {audioUrl && <audio ref={audio} controls src={audioUrl} aria-label="Synthesized speech" />}
        {report && (
          <p
            role="status"
            class="stream-report"
            data-first-audio-ms={report.firstAudioMs ?? ''}
            data-synthesis-end-ms={report.synthesisEndMs ?? ''}
            data-chunks={report.chunks}
          >
            {report.chunks} audio chunks streamed
            {report.firstAudioMs !== null ? ` · playback started at ${report.firstAudioMs} ms` : ''}
            {report.synthesisEndMs !== null ? ` · synthesis finished at ${report.synthesisEndMs} ms` : ''}
          </p>
        )}
        <Alert error={error} />
      </Section>
    </>
  );
}
