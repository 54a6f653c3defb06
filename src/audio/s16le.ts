// s16le PCM arriving in pieces of any length (network frames, pipe reads): whole 16-bit samples out, an odd trailing
// byte kept for the next piece. The project's PCM is little-endian on a little-endian host, so samples are read as
// they lie in memory.

export class S16leReader {
  private carryByte: number | undefined;

  /** Whole samples of `bytes`, preceded by the byte carried from the last call; a copy with its own buffer. */
  read(bytes: Uint8Array): Int16Array {
    const carried = this.carryByte !== undefined;
    const total = bytes.length + (carried ? 1 : 0);
    const samples = new Int16Array(total >> 1);
    const out = new Uint8Array(samples.buffer);
    if (out.length > 0) {
      if (carried) {
        out[0] = this.carryByte!;
        out.set(bytes.subarray(0, out.length - 1), 1);
      } else out.set(bytes.subarray(0, out.length));
    }
    // An odd total leaves the last byte over: the newest one, or the carried one when nothing new came.
    if (total & 1) this.carryByte = bytes.length > 0 ? bytes[bytes.length - 1] : this.carryByte;
    else this.carryByte = undefined;
    return samples;
  }
}
