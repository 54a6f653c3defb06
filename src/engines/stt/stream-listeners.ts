// The listeners of one streaming session (StreamEvents), for engines' StreamingSession implementations: on/off and
// emit in one place, and ListenedStream, the base class that gives a session its on/off.
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

/** The on/off half of a StreamingSession, for engines' sessions to extend: they emit through `listeners`. */
export abstract class ListenedStream {
  protected readonly listeners = new StreamListeners();

  on<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): this {
    this.listeners.on(event, listener);
    return this;
  }

  off<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): this {
    this.listeners.off(event, listener);
    return this;
  }
}
