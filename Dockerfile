# Parlance container image. Build: docker build -t parlance .   Run: docker run -p 8080:8080 -v parlance-data:/var/lib/parlance parlance
#
# Base: node:20-bookworm-slim, i.e. Debian bookworm with Node.js 20 from the Node.js project. Debian bookworm's own
# nodejs package is 18, below the Node.js 20.19 that Parlance needs (package.json "engines"); everything else comes
# from Debian through the same scripts a developer machine uses (scripts/install-debian-packages.sh, `make setup`).
#
# Two stages: the build stage has the compilers and headers (the pocketsphinx addon and better-sqlite3 build from
# source) and the dev dependencies (TypeScript); the runtime image gets only the Debian packages needed at run time
# (`--without build,test`), the compiled dist/, the production node_modules and the built addon.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Debian packages first, so a source change does not reinstall them (this layer only depends on the two scripts).
COPY scripts/install-debian-packages.sh scripts/debian-packages.txt scripts/
RUN bash scripts/install-debian-packages.sh --without test && rm -rf /var/lib/apt/lists/*
# npm dependencies next (only package.json and the lock file).
COPY package.json package-lock.json ./
COPY scripts/install-node-modules.sh scripts/
RUN bash scripts/install-node-modules.sh
COPY . .
# `make setup` finds the packages and node_modules in place and builds the native addon and dist/.
RUN make setup DEBIAN_WITHOUT=test \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
COPY scripts/install-debian-packages.sh scripts/debian-packages.txt scripts/
RUN bash scripts/install-debian-packages.sh --without build,test && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/bin bin/
COPY --from=build /app/dist dist/
# The web console the API nodes serve at /.
COPY --from=build /app/dist-console dist-console/
COPY --from=build /app/node_modules node_modules/
COPY --from=build /app/native/pocketsphinx/build/Release native/pocketsphinx/build/Release/
# espeak-ng's word timings (TTS word timestamps; built by `make setup` beside the addon).
COPY --from=build /app/native/espeak-words/build native/espeak-words/build/
# The narrowband (8 kHz) adaptation `make setup` estimated.
COPY --from=build /app/build/adaptation build/adaptation/

# A dedicated unprivileged user owns the data directory (SQLite database, blobs, models you bring).
# A fixed uid (10001) so a bind-mounted host directory can be given to it: chown 10001:10001 DIR.
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/parlance --shell /usr/sbin/nologin parlance \
 && install -d -o parlance -g parlance -m 0750 /var/lib/parlance
USER parlance

ENV NODE_ENV=production \
    PARLANCE_DATA_DIR=/var/lib/parlance \
    PARLANCE_HOST=0.0.0.0 \
    PARLANCE_PORT=8080
VOLUME ["/var/lib/parlance"]
EXPOSE 8080

# Liveness: /health answers without the database (readiness is GET /ready). No curl in the slim image: Node's fetch.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PARLANCE_PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# The server drains for PARLANCE_SHUTDOWN_DRAIN_SECONDS (8 s) on SIGTERM; docker stop waits 10 s. Run with an init
# process (docker run --init, compose `init: true`) so the helper's exited child processes are reaped.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/bin/parlance.js"]
CMD ["serve"]
