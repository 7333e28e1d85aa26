import { spawnSync } from "node:child_process";
import { GenericContainer, getContainerRuntimeClient } from "testcontainers";
import { LABEL, removeLeftovers } from "./support/cleanup";
import { images } from "./support/engine";

// What an interrupted run leaves behind is removed: a container labelled with the pid of a jest process that
// is gone goes at the next sweep; one labelled with a live process (this one) stays.

jest.setTimeout(120_000);

describe("the container suite's sweep", () => {
  it("removes the containers of a run whose process is gone and keeps those of a live one", async () => {
    const gone = spawnSync("true").pid!; // a pid that has just exited
    const docker = (await getContainerRuntimeClient()).container.dockerode;
    const start = (pid: number) =>
      new GenericContainer(images.nats)
        .withLabels({ [LABEL]: String(pid) })
        .withCommand(["-p", "4222"])
        .start();
    const [orphan, ours] = await Promise.all([start(gone), start(process.pid)]);
    try {
      // Another suite's topology may sweep at the same moment and take the orphan first: what counts is that it
      // is gone after a sweep, whoever's, and ours is not.
      await removeLeftovers();
      const left = (await docker.listContainers({ all: true, filters: { label: [LABEL] } })).map((c) => c.Id);
      expect(left).not.toContain(orphan.getId());
      expect(left).toContain(ours.getId());
    } finally {
      await docker
        .getContainer(orphan.getId())
        .remove({ force: true })
        .catch(() => undefined);
      await docker
        .getContainer(ours.getId())
        .remove({ force: true })
        .catch(() => undefined);
    }
  });
});
