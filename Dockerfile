# stampedeless: a static binary on a distroless base, run as a non-root user.
#
#   docker build -t stampedeless .
#   docker run --rm -p 127.0.0.1:6380:6380 -p 127.0.0.1:9121:9121 stampedeless
#
# Publish on loopback as above: the image runs with protected mode off and
# no password, as the official redis image does, so the published ports are
# the boundary (docs/operations.md, The image); -p 6380:6380 would offer an
# unauthenticated cache on every interface of the host.
#   docker compose up     # three replicas, Redis, the demo origin, Prometheus, Grafana
#
# The same image runs the demo origin (`stampedeless origin`) and its own
# healthcheck (`stampedeless ping`): the base image has no shell and no
# redis-cli.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# CGO_ENABLED=0: a static binary that needs no libc in the final image.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/stampedeless ./cmd/stampedeless

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/stampedeless /stampedeless
# uid 65532 (nonroot): no root inside the container.
USER 65532:65532
# In a container, loopback is unreachable from anywhere else: listen on all
# interfaces, and (as the official redis image does) turn protected mode
# off, since every client, even one on the host through a published port,
# arrives from outside the container's loopback: which ports are published,
# and to whom, is the boundary. Flags override these (every flag has a
# STAMPEDELESS_ variable).
ENV STAMPEDELESS_ADDR=0.0.0.0:6380 \
    STAMPEDELESS_METRICS_ADDR=0.0.0.0:9121 \
    STAMPEDELESS_PROTECTED_MODE=no
EXPOSE 6380 9121
# ping reads STAMPEDELESS_ADDR and STAMPEDELESS_REQUIREPASS as the server does.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/stampedeless", "ping"]
ENTRYPOINT ["/stampedeless"]
CMD ["serve"]
