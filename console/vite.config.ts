// Vite build of the web console into ../dist-console (served at `/` by src/modules/console/routes.ts).
// Everything is bundled locally: the console works air-gapped.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  logLevel: 'warn',
  build: { outDir: fileURLToPath(new URL('../dist-console', import.meta.url)), emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0 },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
});
