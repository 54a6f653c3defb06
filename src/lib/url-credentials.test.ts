import { describe, expect, it } from 'vitest';
import { maskUrlCredentials } from './url-credentials.js';

describe('maskUrlCredentials', () => {
  it('masks user and password, keeping the rest as sent', () => {
    expect(maskUrlCredentials('http://user:pass@host:8080/a.wav?x=1#f')).toBe('http://****:****@host:8080/a.wav?x=1#f');
    expect(maskUrlCredentials('https://token@files.example.com/a%20b.mp3')).toBe('https://****@files.example.com/a%20b.mp3');
    expect(maskUrlCredentials('https://u:p%40ss@h/x@y')).toBe('https://****:****@h/x@y');
  });

  it('leaves URLs without credentials, and non-URLs, unchanged', () => {
    expect(maskUrlCredentials('https://host/path@not-credentials')).toBe('https://host/path@not-credentials');
    expect(maskUrlCredentials('https://host/a.wav')).toBe('https://host/a.wav');
    expect(maskUrlCredentials(null)).toBeNull();
  });
});
