import type { Settings } from './settings.js';

/**
 * What a node runs (PARLANCE_ROLE, `serve --role`): the API (HTTP and both WebSockets; jobs are only enqueued), the
 * job processors (async transcription, webhook delivery, voice preparation), or both. The same modules either way.
 */
export function nodeRole(settings: Pick<Settings, 'role'>): { servesApi: boolean; runsJobs: boolean } {
  return { servesApi: settings.role !== 'worker', runsJobs: settings.role !== 'api' };
}
