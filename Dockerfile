# chime server in a container: a static binary on an empty image.
#
#   docker build -t chime .
#   docker run -p 8080:8080 -v chime-data:/data chime
#
# The SQLite database is /data/chime.db, on the volume; give a cluster
# CHIME_DATABASE_URL=postgres://… instead (see docker-compose.yml). The
# first start prints the admin password in the log. Every `chime` command
# runs the same way: docker run --rm chime version.
#
# The image has no shell, so shell jobs cannot run in it; HTTP jobs and Go
# job types can.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO_ENABLED=0: modernc.org/sqlite is pure Go, so the binary links
# statically and needs no libc. timetzdata embeds the IANA time zones that
# cron schedules name, since the runtime image has no /usr/share/zoneinfo.
# With .git in the build context, the toolchain records the version and
# commit that `chime version` and chime_build_info report.
RUN CGO_ENABLED=0 go build -trimpath -tags timetzdata -ldflags='-s -w' -o /out/chime ./cmd/chime \
 && mkdir -p /out/data /out/tmp \
 && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/chime /chime
COPY --from=build /out/tmp /tmp
# 65532 is the conventional "nonroot" user; the data directory is its own.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
ENV HOME=/data \
    CHIME_DATABASE_URL=sqlite:/data/chime.db \
    CHIME_LISTEN=:8080
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/chime"]
CMD ["server"]
