# The Lorenz operator image: the controller (`lorenz controller`) and, at /lorenz/lorenz.js,
# the runner bundle that the init container of every run Pod copies into an emptyDir
# (and, beside it, /lorenz/scripted-agent.mjs, the scripted ACP agent the samples use), with
# its launcher /lorenz/lorenz and the V8 startup snapshot the launcher starts the runner from
# when the agent image's node is this image's (else the bundle: see hack/launcher.sh).
#
# Two stages. The build stage installs the locked dependencies and bundles the CLI with
# esbuild; the bundle is self-contained (test/unit/repo/packaging-image.test.ts checks that it
# imports nothing but Node built-ins), so the final stage carries no node_modules at all.
# Only the pinned base images and the npm registry are fetched.

# BASE_IMAGE: any image with node 24 and npm; hack/images.sh passes one it builds here for
# machines without an image registry. The default is the public image.
ARG BASE_IMAGE=node:24.21.0-bookworm-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /src
# Dependencies first: this layer is reused until package*.json change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# The bundler, its ssh2 options, the snapshot builder, the launcher it installs, and the web
# view's size report.
COPY hack/bundle.mjs hack/bundle-native.mjs hack/snapshot.mjs hack/launcher.sh hack/web-size.mjs hack/
COPY src/ src/
# The web view (Preact, built by Vite into dist/web; lorenz server finds it beside lorenz.js).
COPY web/ web/
# The scripted ACP agent (no model, no API key) ships too: the samples and the demo use it.
COPY test/fixtures/scripted-agent/ test/fixtures/scripted-agent/
RUN npm run build \
  && mkdir -p /out/lorenz \
  && cp dist/lorenz.js dist/lorenz dist/lorenz.snapshot.blob dist/lorenz.snapshot.key \
        dist/scripted-agent.mjs /out/lorenz/ \
  && cp -r dist/web /out/lorenz/web

FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="lorenz" \
      org.opencontainers.image.description="Lorenz operator: one Pod per issue run, a coding agent in each" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/lorenz-dev/lorenz"
ENV NODE_ENV=production
# Owned by root and not writable by the runtime user: the image works with
# readOnlyRootFilesystem: true, and nothing at run time can alter the runner that is
# copied into run Pods.
COPY --from=build --chown=0:0 /out/lorenz/ /lorenz/
# uid/gid 65532 ("nonroot" in distroless images), the same uid run Pods default to.
USER 65532:65532
WORKDIR /lorenz
EXPOSE 8080 8081 8090
# V8 grows the young generation up to 2 x 64 MiB under a burst of watch events and keeps it;
# 8 MiB semi-spaces, fixed (min = max), cost a burst of 500 runs about 25 scavenges where
# the 1 MiB that --optimize-for-size implies on the command line cost about 210. The
# controller and the server turn --optimize-for-size on once running instead (compact old
# space, memory given back at rest; src/controller/runtime/heap-flags.ts), which keeps these
# semi-spaces. Measured by bench:reconcile (docs/benchmarks.md, "Reconcile cost, third pass").
ENTRYPOINT ["node", "--max-semi-space-size=8", "--min-semi-space-size=8", "/lorenz/lorenz.js"]
CMD ["controller"]
