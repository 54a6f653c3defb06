// The web console (console/, built by Vite into dist-console/) served at `/`: its built files only, one route
// each (no wildcard), so every API path, 404 and 405 behaves as before. A worker node serves no console.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { RoutePlugin } from '../../http/app-types.js';
import type { Logger } from 'pino';

/** dist-console/ at the repository root, from src/modules/console (tsx) and dist/modules/console alike. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../dist-console/', import.meta.url));

export interface ConsoleRoutesOptions {
  log: Logger;
}

export const consoleRoutes: RoutePlugin<ConsoleRoutesOptions> = async (app, { log }) => {
  if (!existsSync(`${CONSOLE_DIR}index.html`)) {
    log.warn({ dir: CONSOLE_DIR }, 'web console not built (make build): GET / answers 404');
    return;
  }
  await app.register(fastifyStatic, {
    root: CONSOLE_DIR,
    wildcard: false,
    // Vite names assets by content hash: cache them for good; index.html is read anew each time.
    setHeaders: (res, file) => {
      res.setHeader('cache-control', file.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
    cacheControl: false,
  });
};
