// A batch pool as the file decoder of live second passes (../second-pass.ts): each utterance is one request of its
// own. The engine gives second passes a pool of their own (engine.ts), so file work never delays them.
import type { SecondPassDecoder } from '../second-pass.js';
import type { BatchPool } from './batch-pool.js';
import type { DecoderBias } from './messages.js';

/** Scheduling priority of second passes in the batch pool (files: 0). */
const LIVE_PRIORITY = 1;

export function batchSecondPass(batch: BatchPool): SecondPassDecoder<DecoderBias> {
  return {
    get size() {
      return batch.size;
    },
    decode(startSample, samples, bias) {
      const request = batch.open({ priority: LIVE_PRIORITY, bias });
      const speechMs = samples.length / 16;
      const tokens = (async () => {
        await request.submit({ startSample, samples, speechMs });
        return request.finish();
      })();
      return { tokens, cancel: () => request.cancel() };
    },
  };
}
