import java.nio.charset.StandardCharsets;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.msk.auth.iam.internals.AWS4SignedPayloadGenerator;
import software.amazon.msk.auth.iam.internals.AuthenticationRequestParams;

/**
 * AWS_MSK_IAM payloads from aws-msk-iam-auth's own generator (the one IAMSaslClient uses), for
 * fixed credentials and hosts, at the current time: tests/aws_msk_iam.rs signs the same at the
 * time each payload names and compares the bytes. Writes JSON to standard output.
 */
public final class Gen {
    private static String q(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    public static void main(String[] args) throws Exception {
        AwsCredentials[] keys = {
            AwsBasicCredentials.create("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            AwsSessionCredentials.create("ASIAEXAMPLE2", "s3cr3t/with+slashes=", "IQoJb3JpZ2luX2VjE//session+token/=="),
        };
        String[] hosts = {"b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com", "b-2.other.xyz789.c3.kafka.eu-west-3.amazonaws.com"};
        String ua = "aws-msk-iam-auth/2.3.6 (fixed for the vectors)";
        StringBuilder out = new StringBuilder("{\n \"source\": \"aws-msk-iam-auth 2.3.6\",\n \"payloads\": [\n");
        boolean first = true;
        for (AwsCredentials c : keys) {
            for (String host : hosts) {
                AuthenticationRequestParams p = AuthenticationRequestParams.create(host, c, ua);
                String payload = new String(new AWS4SignedPayloadGenerator().signedPayload(p), StandardCharsets.UTF_8);
                String token = c instanceof AwsSessionCredentials s ? q(s.sessionToken()) : "null";
                out.append(first ? "" : ",\n").append("  {\"access_key_id\": ").append(q(c.accessKeyId()))
                    .append(", \"secret_access_key\": ").append(q(c.secretAccessKey()))
                    .append(", \"session_token\": ").append(token)
                    .append(", \"host\": ").append(q(host))
                    .append(", \"region\": ").append(q(p.getRegion().id()))
                    .append(", \"user_agent\": ").append(q(ua))
                    .append(", \"payload\": ").append(q(payload)).append("}");
                first = false;
            }
        }
        System.out.println(out.append("\n ]\n}"));
    }
}
