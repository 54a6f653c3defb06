// Multichannel transcripts (`enable_multichannel`): each channel of the audio is recognised on its own (processor.ts),
// its tokens labelled with `channel` (0-based), and the channels' tokens merged into one transcript in time order.
// Spacing stays per channel: a channel's tokens joined are its text (its first token bare, every later one with its
// leading space), so a client that groups the tokens by channel reads each side of a call as it was said.

/** Most channels one multichannel transcription recognises (each is a recognition of its own). */
export const MAX_CHANNELS = 8;

/** The channels a job recognises: each of `count` for a multichannel job, else the one mix (undefined). */
export const channelsOf = (multichannel: boolean, count: number | null): (number | undefined)[] =>
  multichannel && count ? Array.from({ length: count }, (_, c) => c) : [undefined];

/**
 * One transcript from the channels' tokens (`perChannel[c]` is channel c's, in its own order): every token labelled
 * with its channel, all of them in time order. A token without times (a translation) keeps its place after the timed
 * token before it in its channel; at equal times the lower channel comes first.
 */
export function mergeChannels<T extends { start_ms?: number }>(perChannel: readonly (readonly T[])[]): (T & { channel: number })[] {
  const keyed: { token: T & { channel: number }; at: number; channel: number; index: number }[] = [];
  perChannel.forEach((tokens, channel) => {
    let at = 0;
    tokens.forEach((t, index) => {
      at = t.start_ms ?? at;
      keyed.push({ token: { ...t, channel }, at, channel, index });
    });
  });
  keyed.sort((a, b) => a.at - b.at || a.channel - b.channel || a.index - b.index);
  return keyed.map((k) => k.token);
}

/** The transcript's text: its tokens joined in order, a channel's first token spaced from what precedes it. */
export function joinedText(tokens: readonly { text: string }[]): string {
  return tokens.map((t, i) => (i > 0 && !/^\s/.test(t.text) ? ` ${t.text}` : t.text)).join('');
}
