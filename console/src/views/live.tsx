// Live transcription from the microphone over /transcribe-websocket, with a single-use temporary key minted for
// this session. Final tokens are plain, non-final ones (still changing) grey and italic; endpoints show as a
// marker; speakers labelled and in colour; a translation, when chosen, side by side.
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { temporaryKey, wsUrl } from '../lib/api.js';
import { loadSttModels, modelChoices, splitList, translationChoices, translationOf } from '../lib/models.js';
import { captureMicrophone, type Capture } from '../lib/pcm-capture.js';
import { isTranslation, speakerColour, type Token } from '../lib/tokens.js';
import { Alert, Field, Section, SelectField, useLoad } from '../lib/ui.js';

type State = 'idle' | 'connecting' | 'listening' | 'finishing';

interface Frame {
  tokens?: Token[];
  finished?: boolean;
  error_type?: string;
  error_message?: string;
}

function TokenLine({ finals, nonFinals, label }: { finals: Token[]; nonFinals: Token[]; label: string }) {
  // With diarization, each change of speaker among the final words is labelled in words, not only in colour.
  let speaker: string | undefined;
  const show = (t: Token, i: number, final: boolean) => {
    if (t.text === '<end>')
      return (
        <span key={i} class="endpoint" role="img" aria-label="endpoint">
          ⏎
        </span>
      );
    if (t.text === '<fin>') return null;
    const speakerChange = final && t.speaker !== undefined && t.speaker !== speaker;
    if (final && t.speaker !== undefined) speaker = t.speaker;
    return (
      <Fragment key={i}>
        {speakerChange && (
          <span class="speaker-label" style={{ color: speakerColour(t.speaker) }}>
            Speaker {t.speaker}
          </span>
        )}
        <span class={final ? 'final' : 'non-final'} style={{ color: final ? speakerColour(t.speaker) : undefined }} data-speaker={t.speaker}>
          {t.text}
        </span>
      </Fragment>
    );
  };
  return (
    <div class="live-text" role="log" aria-label={label} aria-live="polite">
      {finals.map((t, i) => show(t, i, true))}
      {nonFinals.map((t, i) => show(t, finals.length + i, false))}
    </div>
  );
}

export function LiveView() {
  const models = useLoad(() => loadSttModels('real_time'));
  const [model, setModel] = useState('');
  const [hints, setHints] = useState('');
  const [diarize, setDiarize] = useState(false);
  const [endpoints, setEndpoints] = useState(true);
  const [translation, setTranslation] = useState('none');
  const [state, setState] = useState<State>('idle');
  const [finals, setFinals] = useState<Token[]>([]);
  const [nonFinals, setNonFinals] = useState<Token[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [audioMs, setAudioMs] = useState(0);
  const socket = useRef<WebSocket | null>(null);
  const capture = useRef<Capture | null>(null);
  const chosen = models.data?.find((m) => m.id === model) ?? models.data?.[0];

  const cleanup = () => {
    void capture.current?.stop();
    capture.current = null;
    socket.current = null;
    setState('idle');
  };
  useEffect(
    () => () => {
      socket.current?.close();
      void capture.current?.stop();
    },
    [],
  );

  const start = async () => {
    setError(null);
    setFinals([]);
    setNonFinals([]);
    setAudioMs(0);
    setState('connecting');
    try {
      const key = await temporaryKey('transcribe_websocket');
      const ws = new WebSocket(wsUrl('/transcribe-websocket'));
      ws.binaryType = 'arraybuffer';
      socket.current = ws;
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = () => reject(new Error('Could not connect to /transcribe-websocket.'));
      });
      const mic = await captureMicrophone((pcm) => ws.readyState === WebSocket.OPEN && ws.send(pcm));
      capture.current = mic;
      const tr = translationOf(translation);
      ws.send(
        JSON.stringify({
          api_key: key,
          model: chosen?.id,
          audio_format: 'pcm_s16le',
          sample_rate: mic.sampleRate,
          num_channels: 1,
          enable_endpoint_detection: endpoints,
          enable_speaker_diarization: diarize,
          client_reference_id: 'console-live',
          ...(hints.trim() ? { language_hints: splitList(hints) } : {}),
          ...(tr ? { translation: tr } : {}),
        }),
      );
      ws.onmessage = (e: MessageEvent<string>) => {
        const frame = JSON.parse(e.data) as Frame & { total_audio_proc_ms?: number };
        if (frame.error_type) {
          setError(new Error(`${frame.error_message ?? ''} (${frame.error_type})`));
          return;
        }
        const tokens = frame.tokens ?? [];
        setFinals((f) => [...f, ...tokens.filter((t) => t.is_final)]);
        setNonFinals(tokens.filter((t) => !t.is_final));
        if (frame.total_audio_proc_ms !== undefined) setAudioMs(frame.total_audio_proc_ms);
        if (frame.finished) ws.close();
      };
      ws.onclose = () => cleanup();
      ws.onerror = () => setError(new Error('The live session was interrupted.'));
      setState('listening');
    } catch (err) {
      setError(err);
      socket.current?.close();
      cleanup();
    }
  };

  const stop = async () => {
    setState('finishing');
    await capture.current?.stop();
    capture.current = null;
    // An empty frame ends the stream: the server sends what remains, then `finished`, then closes.
    socket.current?.send(new ArrayBuffer(0));
  };

  const original = (ts: Token[]) => ts.filter((t) => !isTranslation(t));
  const translated = (ts: Token[]) => ts.filter(isTranslation);
  const hasTranslation = translationOf(translation) !== undefined;
  const busy = state !== 'idle';

  return (
    <>
      <h1>Live transcription</h1>
      <Section title="Session">
        <div class="form-grid">
          <SelectField id="live-model" label="Model" value={chosen?.id ?? ''} choices={modelChoices(models.data)} onChange={setModel} disabled={busy} />
          <Field id="live-language-hints" label="Language hints">
            <input id="live-language-hints" value={hints} disabled={busy} placeholder="en" onInput={(e) => setHints(e.currentTarget.value)} />
          </Field>
          <label class="inline">
            <input type="checkbox" checked={endpoints} disabled={busy} onChange={(e) => setEndpoints(e.currentTarget.checked)} /> Endpoint detection
          </label>
          <label class="inline">
            <input type="checkbox" checked={diarize} disabled={busy} onChange={(e) => setDiarize(e.currentTarget.checked)} /> Speaker diarization
          </label>
          <SelectField
            id="live-translation"
            label="Translation"
            value={translation}
            choices={translationChoices(chosen)}
            onChange={setTranslation}
            disabled={busy}
          />
          <div class="button-row">
            {state === 'idle' ? (
              <button type="button" onClick={() => void start()} disabled={!chosen}>
                Start microphone
              </button>
            ) : (
              <button type="button" class="danger" onClick={() => void stop()} disabled={state !== 'listening'}>
                Stop
              </button>
            )}
            <span role="status">
              {state === 'listening'
                ? `Listening · ${(audioMs / 1000).toFixed(1)} s processed`
                : state === 'connecting'
                  ? 'Connecting…'
                  : state === 'finishing'
                    ? 'Finishing…'
                    : 'Idle'}
            </span>
          </div>
        </div>
        <Alert error={models.error ?? error} />
      </Section>
      <Section title="Transcript">
        <p class="legend">
          <span class="final">final</span> <span class="non-final">non-final</span> <span class="endpoint">⏎</span> endpoint
        </p>
        <div class={hasTranslation ? 'side-by-side' : ''}>
          <div>
            {hasTranslation && <h3>Original</h3>}
            <TokenLine finals={original(finals)} nonFinals={original(nonFinals)} label="Live transcript" />
          </div>
          {hasTranslation && (
            <div>
              <h3>Translation</h3>
              <TokenLine finals={translated(finals)} nonFinals={translated(nonFinals)} label="Live translation" />
            </div>
          )}
        </div>
      </Section>
    </>
  );
}
