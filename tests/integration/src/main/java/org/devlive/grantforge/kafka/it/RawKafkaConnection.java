package org.devlive.grantforge.kafka.it;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

/**
 * One SASL_PLAINTEXT connection that sends Kafka requests of a version the caller chooses, framed and
 * serialized by kafka-clients' own classes: for requests a release's clients do not send yet (an unstable
 * version such as {@code InitProducerId} v6, which enables two-phase commit), so that the broker's handling of
 * them, authorization included, is tested from the wire.
 */
public final class RawKafkaConnection implements AutoCloseable {
    private static final String CLIENT_ID = "grantforge-it-raw";
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private int correlationId;

    private RawKafkaConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
    }

    /** Connects to {@code node}'s client listener and authenticates as a PLAIN user of the node. */
    public static RawKafkaConnection open(KafkaNode node, String user) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", node.brokerPort()), 10_000);
        socket.setSoTimeout(30_000);
        RawKafkaConnection connection = new RawKafkaConnection(socket);
        try {
            connection.authenticate(user, KafkaNode.USERS.get(user));
        } catch (IOException | RuntimeException e) {
            connection.close();
            throw e;
        }
        return connection;
    }

    private void authenticate(String user, String password) throws IOException {
        SaslHandshakeResponse handshake = send(new SaslHandshakeRequest.Builder(
                new SaslHandshakeRequestData().setMechanism("PLAIN")).build((short) 1));
        expectNone("SaslHandshake", Errors.forCode(handshake.data().errorCode()));
        byte[] plain = ("\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8);
        SaslAuthenticateResponse authenticated = send(new SaslAuthenticateRequest.Builder(
                new SaslAuthenticateRequestData().setAuthBytes(plain)).build((short) 2));
        expectNone("SaslAuthenticate", Errors.forCode(authenticated.data().errorCode()));
    }

    private static void expectNone(String what, Errors error) {
        if (error != Errors.NONE) {
            throw new IllegalStateException(what + " answered " + error);
        }
    }

    /** Sends {@code request} (at the version it was built with) and reads its response. */
    @SuppressWarnings("unchecked")
    public <R extends AbstractResponse> R send(AbstractRequest request) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), CLIENT_ID, ++correlationId);
        ByteBuffer frame = request.serializeWithHeader(header);
        byte[] bytes = new byte[frame.remaining()];
        frame.get(bytes);
        out.writeInt(bytes.length);
        out.write(bytes);
        out.flush();
        byte[] response = new byte[in.readInt()];
        in.readFully(response);
        return (R) AbstractResponse.parseResponse(ByteBuffer.wrap(response), header);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
