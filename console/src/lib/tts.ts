// Text-to-speech calls shared by the TTS playground and the cloned-voices page.
import { api, request } from './api.js';

export interface TtsModel {
  id: string;
  name: string;
  aliased_model_id: string | null;
  languages: { code: string; name: string }[];
  voices: { id: string; description: string; gender: string }[];
}

export const AUDIO_FORMATS = ['wav', 'mp3', 'opus', 'flac', 'aac', 'pcm_s16le', 'pcm_f32le', 'pcm_mulaw', 'pcm_alaw'] as const;
/** Formats the browser's <audio> element plays; raw PCM is download only. */
export const playable = (format: string): boolean => !format.startsWith('pcm_');
export const extensionOf = (format: string): string => (format.startsWith('pcm_') ? 'raw' : format === 'opus' ? 'ogg' : format);

export const loadTtsModels = async (): Promise<TtsModel[]> => (await api<{ models: TtsModel[] }>('/v1/tts-models')).models;

export interface SpeechRequest {
  model: string;
  language: string;
  voice: string;
  text: string;
  audio_format: string;
  speed?: number;
}

/** POST /tts (the console session key is accepted there): the whole audio as a Blob. */
export async function synthesize(req: SpeechRequest): Promise<Blob> {
  const res = await request('/tts', { method: 'POST', json: req });
  return res.blob();
}
