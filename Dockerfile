# The Maitento server (`mt serve`) on Node.js 24 LTS. Built from the repository root: docker build -t maitento .
FROM node:24-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && npx tsc -b && npm prune --omit=dev --no-audit --no-fund

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
# The PGlite data folder must belong to the user the server runs as (a new volume takes this ownership).
RUN mkdir -p /data && chown node:node /data
# The image's `node` user by its numeric id (1000), so Kubernetes' runAsNonRoot can verify it is not root. With
# PostgreSQL the process writes nothing to disk: it runs with a read-only root filesystem and an empty /tmp
# (docs/operations.md, "Kubernetes"; deploy/kubernetes). Only PGlite writes, to /data.
USER 1000:1000
EXPOSE 8080
# DATABASE_URL selects PostgreSQL (MT_SECRET_KEY is then required); without it PGlite keeps its data in /data.
VOLUME ["/data"]
# GET /health needs no key and answers 200 only when the database answers too (node:24-slim has no curl).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "packages/cli/bin/mt.js", "serve", "--host", "0.0.0.0", "--port", "8080", "--data", "/data"]
