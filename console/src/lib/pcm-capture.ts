// Microphone → 16-bit little-endian PCM chunks (mono, at the AudioContext's rate). An AudioWorklet does the copying
// off the main thread; its tiny source is inlined as a Blob URL so the console needs no extra served file.
const WORKLET = `
class PcmTap extends AudioWorkletProcessor {
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (ch && ch.length) this.port.postMessage(ch.slice(0));
    return true;
  }
}
registerProcessor('pcm-tap', PcmTap);
`;

export interface Capture {
  sampleRate: number;
  stop(): Promise<void>;
}

export function floatToS16le(samples: Float32Array): ArrayBuffer {
  const out = new DataView(new ArrayBuffer(samples.length * 2));
  for (let i = 0; i < samples.length; i++) out.setInt16(i * 2, Math.max(-1, Math.min(1, samples[i]!)) * 0x7fff, true);
  return out.buffer;
}

/** Start capturing; `onChunk` gets about 100 ms of PCM at a time. */
export async function captureMicrophone(onChunk: (pcm: ArrayBuffer) => void): Promise<Capture> {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const ctx = new AudioContext();
  const url = URL.createObjectURL(new Blob([WORKLET], { type: 'text/javascript' }));
  await ctx.audioWorklet.addModule(url);
  URL.revokeObjectURL(url);
  const source = ctx.createMediaStreamSource(stream);
  const tap = new AudioWorkletNode(ctx, 'pcm-tap');
  // Batch the worklet's 128-sample blocks into ~100 ms frames: fewer, larger WebSocket messages.
  const batch = Math.round(ctx.sampleRate / 10);
  let pending: Float32Array[] = [];
  let pendingLength = 0;
  tap.port.onmessage = (e: MessageEvent<Float32Array>) => {
    pending.push(e.data);
    pendingLength += e.data.length;
    if (pendingLength < batch) return;
    const joined = new Float32Array(pendingLength);
    let at = 0;
    for (const p of pending) {
      joined.set(p, at);
      at += p.length;
    }
    pending = [];
    pendingLength = 0;
    onChunk(floatToS16le(joined));
  };
  source.connect(tap);
  return {
    sampleRate: ctx.sampleRate,
    async stop() {
      tap.port.onmessage = null;
      source.disconnect();
      stream.getTracks().forEach((t) => t.stop());
      await ctx.close();
    },
  };
}
