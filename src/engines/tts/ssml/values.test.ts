import { describe, expect, it } from 'vitest';
import { breakStrength, breakTime, prosodyPitch, prosodyRate, prosodyVolume } from './values.js';

describe('SSML attribute values', () => {
  it('reads durations, rates, pitches and volumes', () => {
    expect([breakTime('700ms'), breakTime(' 1.5s '), breakTime('0ms'), breakStrength('x-strong')]).toEqual([0.7, 1.5, 0, 1]);
    expect(['x-slow', '80%', '+20%', '-20%', '1.5'].map(prosodyRate)).toEqual([0.5, 0.8, 1.2, 0.8, 1.5]);
    expect(['high', '+12st', '-2st', '+100%'].map(prosodyPitch)).toEqual([2, 12, -2, 12]);
    expect(['x-soft', '-6dB', '+3dB', '100', '0', 'silent'].map(prosodyVolume)).toEqual([-12, -6, 3, 0, -Infinity, -Infinity]);
    expect(prosodyVolume('50%')).toBeCloseTo(-6.02, 2);
  });

  it('refuses what it cannot read', () => {
    for (const [read, v] of [
      [breakTime, '700'],
      [breakTime, '10.5s'],
      [breakStrength, 'huge'],
      [prosodyRate, '-100%'],
      [prosodyRate, 'quick'],
      [prosodyPitch, '200Hz'],
      [prosodyPitch, '10%'],
      [prosodyPitch, '+13st'],
      [prosodyVolume, '+30dB'],
      [prosodyVolume, '120'],
    ] as const)
      expect(() => read(v), v).toThrow();
  });
});
