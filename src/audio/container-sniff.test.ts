// Container detection from magic bytes (real encoder output is covered by live-pcm.test.ts).
import { describe, expect, it } from 'vitest';
import { demuxerOf, sniffContainer } from './container-sniff.js';

const sniff = (head: string | number[], pad = 16) => {
  const b = typeof head === 'string' ? Buffer.from(head, 'latin1') : Buffer.from(head);
  return sniffContainer(Buffer.concat([b, Buffer.alloc(Math.max(0, pad - b.length))]));
};

describe('sniffContainer', () => {
  it.each<[string | number[], string | undefined]>([
    ['RIFF\x24\x00\x00\x00WAVEfmt ', 'wav'],
    ['RF64\xff\xff\xff\xffWAVEds64', 'wav'],
    ['RIFF\x00\x00\x00\x00\x81\x82\x83\x84', 'wav'], // garbage form type: the WAV reader refuses it by name
    ['RIFF\x00\x00\x00\x00AVI LIST', undefined],
    ['ID3\x04\x00', 'mp3'],
    [[0xff, 0xfb, 0x90, 0x64], 'mp3'],
    [[0xff, 0xf3, 0x40, 0xc4], 'mp3'],
    [[0xff, 0xf1, 0x50, 0x80], 'aac'],
    [[0xff, 0xf9, 0x50, 0x80], 'aac'],
    ['ADIF', 'aac'],
    ['OggS\x00\x02', 'ogg'],
    [[0x1a, 0x45, 0xdf, 0xa3], 'webm'],
    ['fLaC\x00\x00\x00\x22', 'flac'],
    ['#!AMR\n', 'amr'],
    ['#!AMR-WB\n', 'amr'],
    ['FORM\x00\x00\x10\x00AIFFCOMM', 'aiff'],
    ['FORM\x00\x00\x10\x00AIFCFVER', 'aiff'],
    [[0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c], 'asf'],
    ['\x00\x00\x00\x20ftypM4A ', 'mp4'],
    [[7, 7, 7, 7], undefined],
    [[0xff, 0x00], undefined],
  ])('%j → %s', (head, name) => {
    expect(sniff(head)).toBe(name);
  });

  it('works on a stream shorter than the sniffing window', () => {
    expect(sniffContainer(Buffer.from('OggS'))).toBe('ogg');
    expect(sniffContainer(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))).toBe('webm');
    expect(sniffContainer(Buffer.from('RIFF'))).toBe('wav');
    expect(sniffContainer(Buffer.alloc(0))).toBeUndefined();
  });

  it('maps names to ffmpeg demuxers', () => {
    expect(['webm', 'mp4', 'mp3', 'ogg'].map(demuxerOf)).toEqual(['matroska', 'mov', 'mp3', 'ogg']);
  });
});
