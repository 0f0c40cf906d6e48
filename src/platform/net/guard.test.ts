import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { OutboundError } from "./errors";
import { guardUrl, isForbiddenHostname, isPrivateAddress, literalTargetRefused, resolveAllowed, type Resolver } from "./guard";

const PRIVATE = [
  "0.0.0.0",
  "0.1.2.3",
  "10.0.0.1",
  "10.255.255.255",
  "100.64.1.1",
  "100.127.255.254",
  "127.0.0.1",
  "127.1.2.3",
  "169.254.169.254",
  "169.254.0.1",
  "172.16.0.1",
  "172.31.255.255",
  "192.0.0.1",
  "192.168.1.1",
  "198.18.0.1",
  "198.19.255.255",
  "224.0.0.1",
  "239.255.255.250",
  "240.0.0.1",
  "255.255.255.255",
  "::",
  "::1",
  "[::1]",
  "fc00::1",
  "fd00:ec2::254",
  "fdff:ffff::1",
  "fe80::1",
  "fe80::1%eth0",
  "febf::1",
  "ff02::1",
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "::FFFF:7F00:0001",
  "0:0:0:0:0:ffff:7f00:1",
  "::ffff:10.1.2.3",
  "::ffff:169.254.169.254",
  "::ffff:a9fe:a9fe",
  "::127.0.0.1",
  "::7f00:1",
  "::192.168.0.1",
  "::ffff:0:127.0.0.1",
  "64:ff9b::127.0.0.1",
  "64:ff9b::a9fe:a9fe",
  // 6to4 (2002::/16): the IPv4 address is bits 16-47.
  "2002:7f00:1::",
  "2002:7f00:0001:abcd::1",
  "2002:a00:1::1",
  "2002:c0a8:101::",
  "2002:a9fe:a9fe::",
  "2002::",
  "2002:e000:1::",
  // Local-use NAT64 (64:ff9b:1::/48, RFC 8215), with the IPv4 address where RFC 6052 puts it for a /96 prefix
  // (the common one) and for /48, /56 and /64 prefixes (u-octet and suffix zero).
  "64:ff9b:1::127.0.0.1",
  "64:ff9b:1::a9fe:a9fe",
  "64:ff9b:1:abcd:0:1:10.0.0.1",
  "64:ff9b:1:ffff:ffff:ffff:192.168.1.1",
  "64:ff9b:1:7f00:0:100::", // /48: 127.0.0.1
  "64:ff9b:1:a9:fe:a9fe::", // /56: 169.254.169.254
  "64:ff9b:1:1:a:0:100:0", // /64: 10.0.0.1
  "127.0.0.1.",
  "not-an-ip",
  "",
  "0177.0.0.1",
  "1.2.3",
];

const PUBLIC = [
  "1.1.1.1",
  "8.8.8.8",
  "93.184.216.34",
  "100.63.255.255",
  "100.128.0.1",
  "172.15.255.255",
  "172.32.0.1",
  "192.0.1.1",
  "192.169.0.1",
  "198.17.255.255",
  "198.20.0.1",
  "169.253.1.1",
  "223.255.255.255",
  "11.0.0.1",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "[2001:db8::1]",
  "::ffff:8.8.8.8",
  "::ffff:808:808",
  "::8.8.8.8",
  "64:ff9b::8.8.8.8",
  "2002:808:808::",
  "2002:808:808:1::1",
  "2002:5db8:d822::1",
  "64:ff9b:1::8.8.8.8",
  "64:ff9b:1::5db8:d822",
  "64:ff9b:1:abcd:0:1:1.1.1.1",
  "64:ff9b:1:1:8:808:800:0", // /64: 8.8.8.8 (as /96: 8.0.0.0, public too)
  "64:ff9b:2::127.0.0.1", // outside 64:ff9b:1::/48
  "fbff::1",
  "fe00::1",
];

describe("isPrivateAddress", () => {
  for (const ip of PRIVATE) test(`refuses ${JSON.stringify(ip)}`, () => expect(isPrivateAddress(ip)).toBe(true));
  for (const ip of PUBLIC) test(`allows ${ip}`, () => expect(isPrivateAddress(ip)).toBe(false));
});

describe("isForbiddenHostname", () => {
  test("refused names", () => {
    for (const h of [
      "localhost",
      "LOCALHOST.",
      "localhost..",
      "foo.localhost",
      "a.b.LocalHost",
      "metadata.google.internal",
      "Metadata.Google.Internal.",
    ]) {
      expect(isForbiddenHostname(h)).toBe(true);
    }
  });
  test("allowed names", () => {
    for (const h of ["example.com", "localhost.example.com", "notlocalhost", "mylocalhost", "google.internal", "metadata.google.internal.example"]) {
      expect(isForbiddenHostname(h)).toBe(false);
    }
  });
});

const fixed =
  (map: Record<string, string[]>): Resolver =>
  async (host) => {
    const r = map[host];
    if (!r) throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    return r;
  };

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    expect(e).toBeInstanceOf(OutboundError);
    return (e as OutboundError).code;
  }
}

describe("resolveAllowed", () => {
  const resolver = fixed({
    "loop.test": ["127.0.0.1"],
    "public.test": ["93.184.216.34"],
    "dual.test": ["2606:4700::1", "93.184.216.34"],
    "mixed.test": ["93.184.216.34", "10.0.0.5"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "metadata.test": ["169.254.169.254"],
    "empty.test": [],
  });

  test("literal IPs are checked directly, without the resolver", async () => {
    let calls = 0;
    const counting: Resolver = async (h) => {
      calls++;
      return resolver(h);
    };
    expect(await code(resolveAllowed("127.0.0.1", false, counting))).toBe("TARGET_NOT_ALLOWED");
    expect(await code(resolveAllowed("[::ffff:7f00:1]", false, counting))).toBe("TARGET_NOT_ALLOWED");
    expect(await code(resolveAllowed("[fd00:ec2::254]", false, counting))).toBe("TARGET_NOT_ALLOWED");
    expect(await resolveAllowed("127.0.0.1", true, counting)).toBe("127.0.0.1");
    expect(await resolveAllowed("8.8.8.8", false, counting)).toBe("8.8.8.8");
    expect(await resolveAllowed("[2001:db8::1]", false, counting)).toBe("2001:db8::1");
    expect(calls).toBe(0);
  });

  test("a name resolving to a private address is refused unless allowed", async () => {
    expect(await code(resolveAllowed("loop.test", false, resolver))).toBe("TARGET_NOT_ALLOWED");
    expect(await code(resolveAllowed("mapped.test", false, resolver))).toBe("TARGET_NOT_ALLOWED");
    expect(await code(resolveAllowed("metadata.test", false, resolver))).toBe("TARGET_NOT_ALLOWED");
    expect(await resolveAllowed("loop.test", true, resolver)).toBe("127.0.0.1");
  });

  test("every resolved address must be allowed", async () => {
    expect(await code(resolveAllowed("mixed.test", false, resolver))).toBe("TARGET_NOT_ALLOWED");
    expect(await resolveAllowed("mixed.test", true, resolver)).toBe("93.184.216.34");
  });

  test("returns a checked address, IPv4 preferred", async () => {
    expect(await resolveAllowed("public.test", false, resolver)).toBe("93.184.216.34");
    expect(await resolveAllowed("dual.test", false, resolver)).toBe("93.184.216.34");
    expect(await resolveAllowed("PUBLIC.TEST.", false, resolver)).toBe("93.184.216.34");
  });

  test("forbidden names are refused before any lookup", async () => {
    let calls = 0;
    const counting: Resolver = async () => {
      calls++;
      return ["93.184.216.34"];
    };
    for (const h of ["localhost", "LOCALHOST.", "foo.localhost", "metadata.google.internal"]) {
      expect(await code(resolveAllowed(h, false, counting))).toBe("TARGET_NOT_ALLOWED");
    }
    expect(calls).toBe(0);
  });

  test("resolution failures are NETWORK errors", async () => {
    expect(await code(resolveAllowed("nowhere.test", false, resolver))).toBe("NETWORK");
    expect(await code(resolveAllowed("empty.test", false, resolver))).toBe("NETWORK");
  });

  test("system resolver: a /etc/hosts name on loopback is refused", async () => {
    const hosts = (() => {
      try {
        return readFileSync("/etc/hosts", "utf8");
      } catch {
        return "";
      }
    })();
    const name = hosts
      .split("\n")
      .map((l) => l.replace(/#.*/, "").trim().split(/\s+/))
      .filter((p) => p[0]?.startsWith("127."))
      .flatMap((p) => p.slice(1))
      .find((n) => n && !n.includes("localhost") && !/^[0-9.]+$/.test(n));
    if (!name) return; // no such entry on this machine; covered by the injected-resolver tests above
    expect(await code(resolveAllowed(name, false))).toBe("TARGET_NOT_ALLOWED");
    expect(await resolveAllowed(name, true)).toMatch(/^127\./);
  });
});

describe("guardUrl and literalTargetRefused", () => {
  test("schemes", async () => {
    expect(guardUrl("https://example.com/x", false).hostname).toBe("example.com");
    expect(guardUrl("http://example.com/x", false).protocol).toBe("http:");
    for (const u of ["ftp://example.com/", "file:///etc/passwd", "javascript:alert(1)", "not a url", "http://"]) {
      expect(await code(Promise.resolve().then(() => guardUrl(u, true)))).toBe("INVALID_URL");
    }
    expect(await code(Promise.resolve().then(() => guardUrl("http://example.com/", false, true)))).toBe("INVALID_URL");
    expect(guardUrl("https://example.com/", false, true).protocol).toBe("https:");
  });

  test("literal refused targets", async () => {
    const refused = [
      "http://127.0.0.1/",
      "http://0x7f.1/",
      "http://2130706433/",
      "http://[::1]:8080/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:7f00:1]/",
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/",
      "https://LOCALHOST./",
      "https://foo.localhost/",
      "http://metadata.google.internal/computeMetadata/v1/",
      "http://0.0.0.0:80/",
    ];
    for (const u of refused) {
      expect(literalTargetRefused(u)).toBe(true);
      expect(await code(Promise.resolve().then(() => guardUrl(u, false)))).toBe("TARGET_NOT_ALLOWED");
      expect(guardUrl(u, true).href).toBe(new URL(u).href);
    }
    for (const u of ["https://example.com/", "http://8.8.8.8/", "http://[2001:db8::1]/", "not a url", "http://localhost.example.com/"]) {
      expect(literalTargetRefused(u)).toBe(false);
    }
  });
});
