# The ome-operator image: `ome-operator run`, with the kubectl-ome plugin beside it.
#
#   docker build -t ome-operator:0.1.0 .      # the tag manifests/kustomization.yaml names
#
# A release sets the labels' revision and date too (docs/releasing.md; release.py prints it):
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED=2026-01-01T00:00:00Z -t ome-operator:0.1.0 .
#
# Two stages: the first downloads the dependencies' wheels that manifests/release/
# requirements.lock pins, each checked against the lock's sha256 (--require-hashes), and builds
# the project's wheel; the final one only installs them (no index, no compiler, no pip, no wheel
# cache left) and runs as a non-root user. The root filesystem can be read-only: Python writes
# no bytecode, and the managed webhook certificate goes to /tmp (an emptyDir in
# manifests/operator/deployment.yaml).
FROM python:3.11.11-slim-bookworm AS build
WORKDIR /src
COPY manifests/release/requirements.lock /wheels/requirements.lock
RUN pip download --no-cache-dir --require-hashes --only-binary=:all: --dest /wheels \
    -r /wheels/requirements.lock
COPY pyproject.toml README.md LICENSE ./
COPY operator ./operator
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11.11-slim-bookworm
# The version this image installs (its wheel) and says it is; release.py checks it is the
# package's. REVISION (the git commit) and CREATED (RFC 3339, the release's SOURCE_DATE_EPOCH)
# come from the build.
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="ome-operator" \
      org.opencontainers.image.description="Kubernetes operator that decides how OME model-serving workloads run" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://ome-operator.invalid/" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels --require-hashes \
        -r /wheels/requirements.lock \
    && pip install --no-cache-dir --no-index --find-links=/wheels --no-deps "ome-operator==${VERSION}" \
    && rm -rf /wheels \
    && pip uninstall --yes pip setuptools wheel
USER 65532:65532
WORKDIR /
EXPOSE 8080 8081 9443
ENTRYPOINT ["ome-operator"]
CMD ["run"]
