/** Hadoop's documented exclude-file sample (GracefulDecommission.md), shared by the CLI suites. */
export const HADOOP_SAMPLE_XML = `<?xml version="1.0"?>
<hosts>
  <host><name>host1</name></host>
  <host><name>host2</name><timeout>123</timeout></host>
  <host><name>host3</name><timeout>-1</timeout></host>
  <host><name>host4, host5,host6</name><timeout>1800</timeout></host>
</hosts>
`;
