// Redaction of final words: each matched span of the transcript becomes one token whose text is its kind's label
// ("[PCI]", "[SSN]", "[NUMBER]", "[EMAIL]", "[PHONE]") with the span's start and end. Pure, synchronous; it runs on the
// recognizer's words or on formatted ones, so spoken digits ("four one one one") and written ones ("4111") both
// count. The rules (docs/guide/recognition.md, "Redaction"):
// - A number run is a stretch of numerals and spoken number words, with "dash" / "hyphen" / "-" between them.
//   Its digits decide its kind: 13–19 digits is a card number (pci), exactly 9 an SSN (ssn), 7, 10 or 11 a phone
//   number (phone); any run is a number (numbers). The most specific requested kind wins.
// - An email is a token with "@" in it, or the spoken form "<name> [dot <name>]… at <domain> dot <tld> [dot <tld>]".
import { digitValue, isNumberish } from './lexicon.js';
import { parseCardinal, parseDigitRun } from './numbers.js';
import type { WordToken } from './types.js';

export const REDACT_KINDS = ['pci', 'ssn', 'numbers', 'email', 'phone'] as const;
export type RedactKind = (typeof REDACT_KINDS)[number];

export const REDACTION_LABELS: Readonly<Record<RedactKind, string>> = {
  pci: '[PCI]',
  ssn: '[SSN]',
  numbers: '[NUMBER]',
  email: '[EMAIL]',
  phone: '[PHONE]',
};

const SEPARATORS = new Set(['dash', 'hyphen', '-']);
/** Top-level domains an email's spoken form ends with. */
const TLDS = new Set(['com', 'org', 'net', 'edu', 'gov', 'io', 'co', 'uk', 'de', 'fr', 'us', 'ca', 'au', 'info', 'biz', 'me', 'ai', 'dev']);

/** Lower-case text without leading whitespace and surrounding punctuation, and that trailing punctuation. */
function split(text: string): { lead: string; core: string; trail: string } {
  const m = /^(\s*)(.*?)([.,?!;:]*)$/s.exec(text)!;
  return { lead: m[1]!, core: m[2]!.toLowerCase(), trail: m[3]! };
}

/** The digits of a written numeral ("4111", "555-1234", "(555)", "+1"), or undefined for anything else. */
function writtenDigits(core: string): string | undefined {
  if (!/\d/.test(core) || !/^[\d\s()+\-./:$%,]+$/.test(core)) return undefined;
  return core.replace(/\D/g, '');
}

const isNumeral = (core: string) => writtenDigits(core) !== undefined || isNumberish(core) || core === 'oh' || core === 'o';

/** Digits of a run of cores (numerals, number words, separators). */
function runDigits(cores: readonly string[]): string {
  let digits = '';
  let i = 0;
  while (i < cores.length) {
    const written = writtenDigits(cores[i]!);
    if (written !== undefined) {
      digits += written;
      i++;
      continue;
    }
    if (SEPARATORS.has(cores[i]!)) {
      i++;
      continue;
    }
    const run = parseDigitRun(cores, i, cores.length);
    if (run.end > i) {
      digits += run.digits;
      i = run.end;
      continue;
    }
    const cardinal = parseCardinal(cores, i, cores.length);
    if (cardinal && cardinal.end > i) {
      digits += String(cardinal.value);
      i = cardinal.end;
      continue;
    }
    const d = digitValue(cores[i], true);
    if (d !== undefined) digits += String(d);
    i++;
  }
  return digits;
}

function numberKind(digits: string, kinds: ReadonlySet<RedactKind>): RedactKind | undefined {
  const n = digits.length;
  if (kinds.has('pci') && n >= 13 && n <= 19) return 'pci';
  if (kinds.has('ssn') && n === 9) return 'ssn';
  if (kinds.has('phone') && (n === 7 || n === 10 || n === 11)) return 'phone';
  if (kinds.has('numbers')) return 'numbers';
  return undefined;
}

/** End (exclusive) of a number run starting at i, or i when there is none. */
function numberRunEnd(cores: readonly string[], i: number): number {
  if (!isNumeral(cores[i]!)) return i;
  let end = i + 1;
  while (end < cores.length) {
    if (isNumeral(cores[end]!)) end++;
    else if (SEPARATORS.has(cores[end]!) && end + 1 < cores.length && isNumeral(cores[end + 1]!)) end += 2;
    else break;
  }
  return end;
}

const isName = (core: string) => /^[a-z][a-z0-9_]*$/.test(core) && core !== 'at' && core !== 'dot';

/** End (exclusive) of a spoken or written email starting at i, or i when there is none. */
function emailEnd(cores: readonly string[], i: number): number {
  if (/^[^@\s]+@[^@\s]+\.[a-z]{2,}$/.test(cores[i]!)) return i + 1;
  // <name> (dot <name>)* at <name> (dot <name>)* dot <tld>
  let j = i;
  if (!isName(cores[j] ?? '')) return i;
  j++;
  while (cores[j] === 'dot' && isName(cores[j + 1] ?? '')) j += 2;
  if (cores[j] !== 'at' || !isName(cores[j + 1] ?? '')) return i;
  j += 2;
  let end = i;
  while (cores[j] === 'dot' && isName(cores[j + 1] ?? '')) {
    j += 2;
    if (TLDS.has(cores[j - 1]!)) end = j;
  }
  return end;
}

/**
 * The tokens with every span of a requested kind replaced by one token: its label (after the first token's leading
 * whitespace, before the last one's trailing punctuation), the span's start and end, its lowest confidence, and the
 * first token's other fields (speaker, language).
 */
export function redactWords<T extends WordToken>(tokens: readonly T[], kinds: ReadonlySet<RedactKind>): T[] {
  if (kinds.size === 0 || tokens.length === 0) return [...tokens];
  const parts = tokens.map((t) => split(t.text));
  const cores = parts.map((p) => p.core);
  const out: T[] = [];
  const replace = (from: number, to: number, kind: RedactKind) => {
    const span = tokens.slice(from, to);
    out.push({
      ...tokens[from]!,
      text: `${parts[from]!.lead}${REDACTION_LABELS[kind]}${parts[to - 1]!.trail}`,
      end_ms: tokens[to - 1]!.end_ms,
      confidence: Math.min(...span.map((t) => t.confidence)),
    });
  };
  let i = 0;
  while (i < tokens.length) {
    if (kinds.has('email')) {
      const end = emailEnd(cores, i);
      if (end > i) {
        replace(i, end, 'email');
        i = end;
        continue;
      }
    }
    const end = numberRunEnd(cores, i);
    if (end > i) {
      const kind = numberKind(runDigits(cores.slice(i, end)), kinds);
      if (kind) replace(i, end, kind);
      else out.push(...tokens.slice(i, end));
      i = end;
      continue;
    }
    out.push(tokens[i]!);
    i++;
  }
  return out;
}
