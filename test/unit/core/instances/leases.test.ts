// A lease's session rules follow the instance's major: a 1.x server takes the guard rails per
// session (around the caller's rules); a 2.x server has them in its config and refuses rules per
// session, so only the caller's own go with the session (none when the caller gave none), and
// none at all when the server was started for one task with that task's rules in its config.
import { describe, expect, it } from "vitest";
import { InstanceLeases } from "../../../../src/core/instances/leases.js";
import type { InstanceManager } from "../../../../src/core/instances/manager.js";
import type { PermissionRule } from "../../../../src/core/policy/permissions.js";

const GUARD: PermissionRule[] = [{ permission: "bash", pattern: "git push*", action: "deny" }];
const MINE: PermissionRule[] = [{ permission: "edit", pattern: "*", action: "allow" }];

function leasesOn(major: 1 | 2, rulesInConfig?: boolean) {
  const instance = {
    directory: "/p",
    url: "http://127.0.0.1:1",
    port: 1,
    pid: 4242,
    password: "x",
    major,
    exited: new Promise(() => undefined),
    ...(rulesInConfig ? { rulesInConfig } : {}),
  };
  const manager = {
    acquire: async () => instance,
    hold: () => () => undefined,
    sessionRules: (user?: PermissionRule[]) => [...GUARD, ...(user ?? [])],
  } as unknown as InstanceManager;
  return new InstanceLeases(manager, () => ({ close: () => undefined }));
}

describe("a lease's session rules", () => {
  it("on 1.x: the guard rails around the caller's rules", async () => {
    const lease = await leasesOn(1).lease("/p");
    expect(lease.rules(MINE)).toEqual([...GUARD, ...MINE]);
    expect(lease.rules()).toEqual(GUARD);
  });

  it("on 2.x: only the caller's rules (the guard is in the server's config)", async () => {
    const lease = await leasesOn(2).lease("/p");
    expect(lease.rules(MINE)).toEqual(MINE);
    expect(lease.rules()).toBeUndefined();
  });

  it("on 2.x with the task's rules in the server's config: none with the session", async () => {
    const lease = await leasesOn(2, true).lease("/p", { taskRules: MINE });
    expect(lease.rules(MINE)).toBeUndefined();
  });
});
