#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `make setup` / `npm run build`).
import '../dist/cli/main.js';
