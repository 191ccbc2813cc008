/** When two recorded server identities name the same organization, and how one is described. */
import { describe, expect, it } from "vitest";
import { describeServer, type ServerIdentity, sameServer } from "../../src/state/server-identity.ts";

const A = "5f0c4a43-1a62-4d7e-9c1e-2b4f1b5c7a10";
const B = "9d2e7b1f-3c44-4a0b-8f5e-6a7d8c9b0e21";

describe("sameServer", () => {
  it("decides by realm_uuid alone where both have one", () => {
    const here = { url: "https://chat.example.org", realm_url: "https://chat.example.org", realm_uuid: A };
    // The organization moved to another URL: still the same.
    expect(
      sameServer(here, {
        url: "https://new.example.org",
        realm_url: "https://new.example.org",
        realm_uuid: A,
      }),
    ).toBe(true);
    // Another organization at the same URL (a reinstalled server, a new sandbox on the same port).
    expect(sameServer(here, { ...here, realm_uuid: B })).toBe(false);
  });

  it("else compares realm_url, and realm_date_created where both have it", () => {
    const old: ServerIdentity = { url: "https://chat.example.org/", realm_url: "https://chat.example.org" };
    expect(sameServer(old, { url: "https://chat.example.org", realm_url: "https://CHAT.example.org/" })).toBe(
      true,
    );
    expect(sameServer(old, { url: "https://chat.example.org", realm_url: "https://other.example.org" })).toBe(
      false,
    );
    // A server upgraded to send realm_uuid: the URL still decides, the record then learns the id.
    expect(sameServer(old, { ...old, realm_uuid: A })).toBe(true);
    const dated = { ...old, realm_date_created: 1_700_000_000 };
    expect(sameServer(dated, { ...old, realm_date_created: 1_700_000_000 })).toBe(true);
    expect(sameServer(dated, { ...old, realm_date_created: 1_700_000_001 })).toBe(false);
    // Without realm_url (a server too old to send it), the configured URL stands in.
    expect(sameServer({ url: "https://chat.example.org" }, { url: "https://chat.example.org/" })).toBe(true);
    expect(sameServer({ url: "https://a.example.org" }, { url: "https://b.example.org" })).toBe(false);
  });
});

describe("describeServer", () => {
  it("names the organization's URL, how it is reached and its id and creation date", () => {
    expect(
      describeServer({
        url: "http://10.0.0.5:9991",
        realm_url: "https://chat.example.org",
        realm_uuid: A,
        realm_date_created: 1_700_000_000,
      }),
    ).toBe(
      `https://chat.example.org via http://10.0.0.5:9991 (realm_uuid ${A}, created 2023-11-14T22:13:20.000Z)`,
    );
    expect(describeServer({ url: "https://chat.example.org/", realm_url: "https://chat.example.org" })).toBe(
      "https://chat.example.org",
    );
  });
});
