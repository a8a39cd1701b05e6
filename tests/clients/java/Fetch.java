// java.net.http.HttpClient (default version HTTP_2): `java Fetch.java URL USER_AGENT` (UA "" = Java default); TLS verification off; prints status.
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

public class Fetch {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: java Fetch.java URL USER_AGENT");
            System.exit(2);
        }
        // Also skip hostname checks (must be set before the HttpClient class initialises).
        System.setProperty("jdk.internal.httpclient.disableHostnameVerification", "true");
        TrustManager[] trustAll = {new X509TrustManager() {
            public void checkClientTrusted(X509Certificate[] c, String a) {}
            public void checkServerTrusted(X509Certificate[] c, String a) {}
            public X509Certificate[] getAcceptedIssuers() { return new X509Certificate[0]; }
        }};
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, trustAll, new SecureRandom());
        HttpClient client = HttpClient.newBuilder().sslContext(ctx).build(); // version defaults to HTTP_2
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(args[0])).GET();
        if (!args[1].isEmpty()) rb.header("User-Agent", args[1]);
        HttpRequest req = rb.build();
        try {
            HttpResponse<String> resp = client.send(req, HttpResponse.BodyHandlers.ofString());
            System.err.println("version: " + resp.version());
            System.out.println(resp.statusCode());
        } catch (java.io.IOException e) {
            System.err.println(e);
            System.exit(1);
        }
    }
}
