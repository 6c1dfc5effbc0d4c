# Reservoir as a container: serves the directory mounted at /data over Streamable HTTP on :7337.
#
#   docker build -t reservoir .
#   docker run --rm --read-only --tmpfs /tmp -p 127.0.0.1:7337:7337 \
#     -v "$PWD/docs:/data:ro" -e RESERVOIR_HOSTNAME=localhost \
#     -e RESERVOIR_TOKEN_SHA256="$(reservoir token | sed -n 's/^sha256: //p')" reservoir
#
# It runs as the unprivileged `node` user, writes nothing to its root filesystem (so --read-only
# works), and reports healthy once /healthz answers. Mount your own config over
# /etc/reservoir/reservoir.yaml to serve other sources. docs/operations.md has the smoke run;
# `npm run test:image` replays this file's steps without a container engine (scripts/replay-image.mjs).
# Node 24, the current LTS line (Node 22 works too: README, "Install").

FROM node:24-bookworm-slim AS build
WORKDIR /src
# better-sqlite3 12 (the Node 20 build, still installed) compiles from source when no prebuilt binary
# matches; 13, the one Node 24 loads, ships its own prebuilt Node-API binary.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY schema ./schema
# `npm ci` runs the `prepare` script, which builds dist/; then the dev dependencies go.
RUN npm ci && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# glibc makes a malloc arena per thread (libuv's pool, V8's helpers) and keeps what is freed in each:
# two arenas give a big listing's native memory back (docs/benchmarks.md, "Memory after a burst").
ENV MALLOC_ARENA_MAX=2
# Node 24 lets V8's young generation grow to 64 MB a semi-space on a large machine: a listing of
# 100,000 files then peaks at ~230 MB; at 16 MB (Node 20's and 22's size) at ~145 MB, for the same
# CPU a resource (docs/benchmarks.md, "Heap growth while paging").
ENV NODE_OPTIONS=--max-semi-space-size=16
# What Reservoir keeps across requests (the search index, the cursor key) goes to /tmp, the tmpfs of
# a --read-only run; mount a volume at /tmp/reservoir to keep it across container restarts.
ENV XDG_CACHE_HOME=/tmp/reservoir
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/schema ./schema
COPY LICENSE README.md ./
COPY deploy/reservoir.yaml /etc/reservoir/reservoir.yaml
USER node
EXPOSE 7337
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:7337/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/dist/cli/index.js"]
CMD ["serve", "--config", "/etc/reservoir/reservoir.yaml"]
