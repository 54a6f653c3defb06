// Reading pauses for a socket whose audio arrives much faster than it is recognised, and resumes once the session
// caught up: the backlog stays bounded without dropping audio.
import type { WebSocket } from 'ws';

/** Pause reading from a client that sends audio much faster than it is recognised; resume once caught up. */
const PAUSE_ABOVE_BYTES = 8 << 20;
const RESUME_BELOW_BYTES = 2 << 20;

export interface Backlogged {
  readonly backlogBytes: number;
  readonly closed: boolean;
}

/** Call after each message; returns a stop function for the socket's close. */
export function backpressure(ws: WebSocket, session: Backlogged): { check(): void; stop(): void } {
  let resumeTimer: NodeJS.Timeout | undefined;
  return {
    check() {
      if (resumeTimer || session.backlogBytes <= PAUSE_ABOVE_BYTES) return;
      ws.pause();
      resumeTimer = setInterval(() => {
        if (session.closed || session.backlogBytes < RESUME_BELOW_BYTES) {
          clearInterval(resumeTimer);
          resumeTimer = undefined;
          ws.resume();
        }
      }, 20);
    },
    stop() {
      if (resumeTimer) clearInterval(resumeTimer);
    },
  };
}
