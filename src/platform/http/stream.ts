// A response body written while the client reads: the next chunk is pulled only when the client wants it
// (backpressure), so a large answer (an export, a HAR) is never buffered whole. Text chunks are UTF-8 encoded.
export function pullStream(chunks: AsyncGenerator<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(typeof value === "string" ? encoder.encode(value) : value);
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}
