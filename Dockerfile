# The Maitento server (`mt serve`). Built from the repository root: docker build -t maitento .
FROM node:20-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && npx tsc -b && npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
USER node
EXPOSE 8080
# DATABASE_URL selects PostgreSQL (MT_SECRET_KEY is then required); without it PGlite keeps its data in /data.
VOLUME ["/data"]
CMD ["node", "packages/cli/bin/mt.js", "serve", "--host", "0.0.0.0", "--port", "8080", "--data", "/data"]
