# The blocklist sidecar and the YARN simulator (one image, one `blocklist` executable), laid out as
# the release tarball is (docs/deploy.md) minus its bundled runtime: the image's Node.js runs it.
FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
# Native modules are compiled here from source (node-gyp, the image's own headers), never fetched prebuilt.
ENV npm_config_build_from_source=true
# Only the shipped code: `npm ci` runs the prepare script, which compiles tsconfig.build.json (src/).
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY package.json ./
COPY bin/blocklist ./bin/blocklist
COPY console ./console
COPY conf ./conf
COPY scripts/launch-in-am.sh ./scripts/launch-in-am.sh
USER node
ENTRYPOINT ["node", "/app/bin/blocklist"]
CMD ["sidecar"]
