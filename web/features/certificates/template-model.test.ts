import { describe, expect, test } from "bun:test";
import { defaultAttributes, takeSanDraft, takeSans, templateValidation, tlsServerWithoutSan, toFormValues } from "./template-model";

describe("subject alternative names typed or pasted", () => {
  test("a pasted list adds every valid name once and leaves the bad ones, named", () => {
    const t = takeSans(["localhost"], "localhost, 127.0.0.1 bad_name! ::1\n*.lab.test");
    expect(t.next).toEqual(["localhost", "127.0.0.1", "::1", "*.lab.test"]);
    expect(t.left).toBe("bad_name!");
    expect(t.problem).toStartWith("Not added: bad_name!: Not an IP address");
  });

  test("on save the draft is taken; what cannot be taken blocks validation", () => {
    const v = { ...toFormValues("t", [], defaultAttributes(0)), sanDraft: "localhost, 127.0.0.1, ::1, *.lab.test" };
    expect(takeSanDraft(v)).toEqual({ subjectAltNames: ["localhost", "127.0.0.1", "::1", "*.lab.test"], sanDraft: "" });
    const bad = { ...v, ...takeSanDraft({ ...v, sanDraft: "a.test x_y" }) };
    expect(bad.subjectAltNames).toEqual(["a.test"]);
    expect(templateValidation.sanDraft(bad.sanDraft, bad)).toStartWith("Not added: x_y");
    expect(templateValidation.sanDraft("", bad)).toBeNull();
  });

  test("a TLS server template without any SAN is flagged; other purposes and version 1 are not", () => {
    const v = toFormValues("t", [], defaultAttributes(0));
    expect(tlsServerWithoutSan(v)).toBe(true);
    expect(tlsServerWithoutSan({ ...v, sanDraft: "example.com" })).toBe(false);
    expect(tlsServerWithoutSan({ ...v, subjectAltNames: ["example.com"] })).toBe(false);
    expect(tlsServerWithoutSan({ ...v, extendedKeyUsage: ["codeSigning"] })).toBe(false);
    expect(tlsServerWithoutSan({ ...v, version: "1" })).toBe(false);
  });
});
