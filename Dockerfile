# crossfade's container image: one static binary and the CA certificates it needs to call
# AWS over TLS, on an empty base: no shell, no package manager, no libc, nothing to patch.
#
# There is no build stage: `FROM golang AS build` would pull an image from a registry, and
# the image must build where none is reachable. `make image` builds the binary outside and
# stages it with the host's CA bundle, then runs buildah on this file:
#
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" \
#       -o bin/image/crossfade-linux-amd64 ./cmd/crossfade
#   cp /etc/ssl/certs/ca-certificates.crt bin/image/ca-certificates.crt
#   buildah bud --isolation chroot --build-arg TARGETARCH=amd64 -t crossfade:$(git describe --tags --always --dirty) .
#
# CGO_ENABLED=0 makes the binary static (no dynamic loader in the image to run it) and
# makes Go's own resolver and user lookup used, which need nothing from the image.
FROM scratch

ARG TARGETARCH=amd64
ARG VERSION=dev

LABEL org.opencontainers.image.title="crossfade" \
      org.opencontainers.image.description="Publishes Kubernetes Services and Ingresses to Route 53 (a drop-in for external-dns) and cuts traffic over between clusters" \
      org.opencontainers.image.version="${VERSION}"

# Go reads this path first on Linux; the controller reaches Route 53 (and STS for IRSA) over HTTPS.
COPY bin/image/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY bin/image/crossfade-linux-${TARGETARCH} /crossfade

# 65532 is the "nonroot" user of distroless images; Kubernetes' runAsNonRoot needs a
# numeric UID to verify it.
USER 65532:65532

# The controller's metrics, /healthz and /readyz (--metrics-address :7979, as external-dns).
EXPOSE 7979

ENTRYPOINT ["/crossfade"]
