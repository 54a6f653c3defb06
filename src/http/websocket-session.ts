// Which WebSocket connection the code running now serves, for the connection's access-log line. The dispatcher
// (websocket.ts) runs a connection's handler and every event of its socket in the connection's scope, so whatever a
// module does for it, authentication included, runs there too: the modules need not know about the log.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface WsSession {
  /** The project of the first key that authenticated on this connection. */
  projectId?: string;
}

const current = new AsyncLocalStorage<WsSession>();

export function inWsSession<T>(session: WsSession, fn: () => T): T {
  return current.run(session, fn);
}

interface Authenticator {
  authenticate(...args: never[]): Promise<{ projectId: string }>;
}

/** `auth` whose authentications also name their project to the WebSocket session they ran for (none: no effect). */
export function notingWsProject<A extends Authenticator>(auth: A): A {
  return new Proxy(auth, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (prop !== 'authenticate') return value.bind(target);
      return async (...args: never[]) => {
        const ctx = await target.authenticate(...args);
        const session = current.getStore();
        if (session) session.projectId ??= ctx.projectId;
        return ctx;
      };
    },
  });
}
