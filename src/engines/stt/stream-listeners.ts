// The listeners of one streaming session (StreamEvents), for engines' StreamingSession implementations: on/off and
// emit in one place.
import type { StreamEvents } from './interface.js';

export class StreamListeners {
  private readonly sets: { [E in keyof StreamEvents]: Set<StreamEvents[E]> } = { partial: new Set(), final: new Set(), error: new Set() };

  on<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): void {
    (this.sets[event] as Set<StreamEvents[E]>).add(listener);
  }

  off<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): void {
    (this.sets[event] as Set<StreamEvents[E]>).delete(listener);
  }

  emit<E extends keyof StreamEvents>(event: E, ...args: Parameters<StreamEvents[E]>): void {
    for (const listener of this.sets[event]) (listener as (...a: typeof args) => void)(...args);
  }
}
