// One transcription: live status until it completes, then the transcript as a token timeline (confidence shading,
// speaker colours; click a word to play the audio from there) and exports as text, SRT, VTT and JSON.
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, request, saveBlob } from '../lib/api.js';
import { fileAudioUrl } from '../lib/local-audio.js';
import { confidenceShade, isTranslation, speakerColour, splitSpace, type Token } from '../lib/tokens.js';
import { Alert, formatMs, Section, useInterval, useLoad } from '../lib/ui.js';
import { running, type Transcription } from './transcriptions.js';

const EXPORTS = [
  { format: 'txt', label: 'Text', ext: 'txt' },
  { format: 'srt', label: 'SRT', ext: 'srt' },
  { format: 'vtt', label: 'VTT', ext: 'vtt' },
  { format: 'json', label: 'JSON', ext: 'json' },
] as const;

function Timeline({ tokens, onPlay, nowMs }: { tokens: Token[]; onPlay?: (ms: number) => void; nowMs: number }) {
  return (
    <p class="timeline">
      {tokens.map((t, i) => {
        const [space, word] = splitSpace(t.text);
        const current = t.start_ms !== undefined && t.end_ms !== undefined && nowMs >= t.start_ms && nowMs < t.end_ms;
        const colour = speakerColour(t.speaker);
        const speakerChange = t.speaker !== undefined && t.speaker !== tokens[i - 1]?.speaker;
        return (
          <Fragment key={i}>
            {speakerChange && (
              <span class="speaker-label" style={{ color: colour }}>
                Speaker {t.speaker}
              </span>
            )}
            {space}
            <button
              type="button"
              class={`word${current ? ' current' : ''}`}
              style={{ background: confidenceShade(t.confidence), color: colour, borderColor: colour }}
              title={`${t.start_ms !== undefined ? formatMs(t.start_ms) : ''} · confidence ${Math.round(t.confidence * 100)}%${t.speaker ? ` · speaker ${t.speaker}` : ''}`}
              data-start-ms={t.start_ms}
              disabled={!onPlay || t.start_ms === undefined}
              onClick={() => t.start_ms !== undefined && onPlay?.(t.start_ms)}
            >
              {word}
            </button>
          </Fragment>
        );
      })}
    </p>
  );
}

export function TranscriptView({ id }: { id: string }) {
  const record = useLoad(() => api<Transcription>(`/v1/transcriptions/${id}`), [id]);
  const t = record.data;
  useInterval(record.reload, 1000, t ? running(t) : false);
  const [transcript, setTranscript] = useState<{ text: string; tokens: Token[] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [nowMs, setNowMs] = useState(-1);
  const audio = useRef<HTMLAudioElement>(null);

  useEffect(() => {
    if (t?.status !== 'completed' || transcript) return;
    api<{ text: string; tokens: Token[] }>(`/v1/transcriptions/${id}/transcript`).then(setTranscript, setError);
  }, [t?.status, id, transcript]);

  // An uploaded file's audio comes from the API (or this tab's copy); an audio_url plays from where it is.
  const [fileSrc, setFileSrc] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (!t?.file_id || !transcript) return;
    let live = true;
    fileAudioUrl(t.file_id).then(
      (url) => live && setFileSrc(url),
      (err: unknown) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [t?.file_id, transcript]);
  const audioSrc = t?.file_id ? fileSrc : (t?.audio_url ?? undefined);
  const play = (ms: number) => {
    const el = audio.current;
    if (!el) return;
    el.currentTime = ms / 1000;
    void el.play();
  };

  const exportAs = async (format: string, ext: string) => {
    try {
      const res = await request(`/v1/transcriptions/${id}/transcript`, { query: { format } });
      const base = (t?.filename ?? id).replace(/\.[^.]+$/, '');
      saveBlob(await res.blob(), `${base}.${ext}`);
    } catch (err) {
      setError(err);
    }
  };

  const original = transcript?.tokens.filter((k) => !isTranslation(k)) ?? [];
  const translated = transcript?.tokens.filter(isTranslation) ?? [];
  const speakers = [...new Set(original.map((k) => k.speaker).filter((s): s is string => s !== undefined))];

  return (
    <>
      <p>
        <a href="#/transcriptions">← All transcriptions</a>
      </p>
      <h1>{t?.filename ?? 'Transcription'}</h1>
      <Alert error={record.error ?? error} />
      {t && (
        <p>
          Status:{' '}
          <span class={`status status-${t.status}`} role="status">
            {t.status}
          </span>{' '}
          · {t.model}
          {t.audio_duration_ms ? ` · ${formatMs(t.audio_duration_ms)}` : ''}
          {t.error_message && ` · ${t.error_type}: ${t.error_message}`}
        </p>
      )}
      {transcript && (
        <>
          <Section title="Audio">
            {audioSrc ? (
              <audio
                ref={audio}
                controls
                src={audioSrc}
                preload="auto"
                aria-label="Transcribed audio"
                onTimeUpdate={(e) => setNowMs(e.currentTarget.currentTime * 1000)}
              />
            ) : (
              <p class="hint">{t?.file_id ? 'Loading the audio…' : 'No audio to play.'}</p>
            )}
          </Section>
          <Section title="Transcript">
            <div class="legend" aria-label="Legend">
              <span>
                <span class="swatch" style={{ background: confidenceShade(0.3) }} /> low confidence
              </span>
              {speakers.map((s) => (
                <span key={s} style={{ color: speakerColour(s) }}>
                  ■ Speaker {s}
                </span>
              ))}
              {audioSrc && <span>Click a word to play from there.</span>}
            </div>
            <div class={translated.length ? 'side-by-side' : ''}>
              <div>
                {translated.length > 0 && <h3>Original</h3>}
                <Timeline tokens={original} onPlay={audioSrc ? play : undefined} nowMs={nowMs} />
              </div>
              {translated.length > 0 && (
                <div>
                  <h3>Translation</h3>
                  <Timeline tokens={translated} nowMs={-1} />
                </div>
              )}
            </div>
          </Section>
          <Section title="Export">
            <div class="button-row">
              {EXPORTS.map((x) => (
                <button key={x.format} type="button" class="secondary" onClick={() => void exportAs(x.format, x.ext)}>
                  Export {x.label}
                </button>
              ))}
            </div>
          </Section>
        </>
      )}
    </>
  );
}
