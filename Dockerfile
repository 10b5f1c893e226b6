# The blocklist sidecar and the YARN simulator (one image, one `blocklist` executable).
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
# Only the shipped code: `npm ci` runs the prepare script, which compiles tsconfig.build.json (src/).
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY conf ./conf
COPY scripts ./scripts
USER node
ENTRYPOINT ["node", "/app/bin/blocklist"]
CMD ["sidecar"]
