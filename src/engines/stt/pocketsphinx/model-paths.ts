// The three files of a pocketsphinx model, as the options resolve them (options.ts) and a decoder worker loads them
// (messages.ts, WorkerInit).
export interface PocketsphinxModelPaths {
  /** Acoustic model directory (-hmm). */
  hmm: string;
  /** Language model (-lm), ARPA or binary. */
  lm: string;
  /** Pronunciation dictionary (-dict). */
  dict: string;
}
