// Typed messages between the event loop and a language-identification worker thread (worker.ts).
import type { LanguageIdConfig } from './identify.js';

export type LanguageIdRequest =
  | { id: number; op: 'load'; config: LanguageIdConfig }
  /** The config again: a thread started anew after its predecessor died loads the model itself. */
  | { id: number; op: 'identify'; samples: Int16Array; config: LanguageIdConfig };

export type LanguageIdReply = { ok: true } | { language: string };
