// How the container suite reaches its engine: the Docker-compatible socket infra/containers/setup.sh starts
// (rootful podman here, Docker elsewhere). Imported before testcontainers, which reads these at first use.
// Ryuk (testcontainers' reaper) cannot be pulled here: the suite removes what it starts itself (cleanup.ts).
export const containersHome = process.env.STEWARD_CONTAINERS_HOME ?? "/var/tmp/steward-containers";

process.env.DOCKER_HOST ??= `unix://${containersHome}/podman.sock`;
process.env.TESTCONTAINERS_RYUK_DISABLED ??= "true";
// /.dockerenv exists on this machine, so testcontainers would otherwise dial the bridge's gateway.
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= "127.0.0.1";

/** The images setup.sh builds. */
export const images = {
  steward: `localhost/steward:${process.env.STEWARD_IMAGE_TAG ?? "dev"}`,
  node: "localhost/steward-node:20",
  postgres: "localhost/steward-postgres:15",
  nats: "localhost/steward-nats:2.9",
};
