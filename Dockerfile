# syntax=docker/dockerfile:1
# The manager image: `make docker-build IMG=...` (needs a Docker engine); `make lint-dockerfile` checks
# this file statically.
#
# The project's devDependency `node` downloads Node 24 into node_modules in an install script; the base
# images already are Node 24, so every `npm ci` here runs with --ignore-scripts (no other dependency has
# an install script).
ARG NODE_IMAGE=node:24-alpine

# Build the manager: compile the TypeScript sources (tsconfig.build.json) to dist/.
FROM ${NODE_IMAGE} AS builder
WORKDIR /workspace
# Copy the manifests first so the dependency layer is cached until they change.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY runtime/ runtime/
COPY webhooks/ webhooks/
# `npm run build` is `tsc -p tsconfig.build.json`; tsc is run with the image's node directly because
# node_modules/.bin/node (the skipped `node` devDependency) is not installed.
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

# Production dependencies only.
FROM ${NODE_IMAGE} AS deps
WORKDIR /workspace
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# The runtime image: compiled JavaScript, production node_modules and package.json ("type": "module").
FROM ${NODE_IMAGE}
WORKDIR /workspace
ENV NODE_ENV=production
# V8 sizes its young generation from the memory it sees: in a 256Mi pod that is 1 MiB semi-spaces, and at
# 1,000 CronJobs the manager then spent 60 CPU s a minute in scavenges (bench/README.md). 16 MiB keeps it
# near 4 CPU s a minute; the old generation still follows the pod's limit.
ENV NODE_OPTIONS=--max-semi-space-size=16
COPY --from=deps /workspace/package.json ./package.json
COPY --from=deps /workspace/node_modules ./node_modules
COPY --from=builder /workspace/dist ./dist
# The nonroot uid/gid of distroless and kubebuilder images; config/manager/manager.yaml runs as 65532.
USER 65532:65532

ENTRYPOINT ["node", "dist/cmd/main.js"]
