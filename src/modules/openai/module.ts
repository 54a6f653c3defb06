// The OpenAI audio API of a process: its REST routes (transcriptions, translations, speech) over the native
// services, and OpenAI Realtime transcription sessions (/v1/realtime) rendered over the live core.
import { mount, type Mount } from '../../http/app-types.js';
import type { WsHandler } from '../../http/websocket.js';
import type { RealtimeService } from '../realtime/service.js';
import { openAiRealtimeHandler } from './realtime-routes.js';
import { type OpenaiRoutesOptions, openaiRoutes } from './routes.js';

export function openaiModule(deps: OpenaiRoutesOptions & { realtime: RealtimeService; realtimeModel: string }): { routes: Mount; handler: WsHandler } {
  const { realtime, realtimeModel, ...services } = deps;
  return { routes: mount(openaiRoutes, services), handler: openAiRealtimeHandler(realtime, { defaultModel: realtimeModel }) };
}
