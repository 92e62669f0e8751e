package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ProcessName;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixPeerGoneException;
import org.qnix.lib.ReceiveStatus;

/**
 * What README.md says of a sender that goes away (docs/IMPLEMENTATION.md, Delete_Process): its Sends
 * completed before anybody posted a Receive, the messages were staged by the receiver's NIC, and they
 * are still delivered after it de-registered; only then does a Receive naming it end with PeerGone.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DeadSenderTest
{
    private static final long TIMEOUT_S = 30;

    @Test
    void messagesThatArrivedBeforeTheirSenderLeftAreDeliveredThenPeerGone() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("d"), 2, 1, "threads");
        try (Qnix receiver = TestClusters.registerAlone(dir, 902, "1-0"))
        {
            final ProcessName senderName = new ProcessName(901, 0);
            final int length = 3 * receiver.parameters().pageSize() + 100;
            try (Qnix sender = Qnix.options().name(senderName).group(901, 1).cluster(dir.name()).node("0-0").init())
            {
                final QnixBuffer data = sender.allocateBuffer(length);
                data.lock();
                for (int i = 0; i < length; i++)
                {
                    data.buffer().putByte(i, (byte)(i * 7));
                }
                // No Receive is posted yet: each Send completes once its message is staged at the receiver's NIC.
                final int send = sender.sendContext(receiver.name(), 5, true, data, 0, length);
                sender.send(send);
                sender.waitForSend(send, TIMEOUT_S, TimeUnit.SECONDS);
                final int sendShort = sender.sendContextShort(receiver.name(), 6, true, data.buffer(), 0, 100);
                sender.sendShort(sendShort);
                sender.waitForSend(sendShort, TIMEOUT_S, TimeUnit.SECONDS);
            }
            TestClusters.await("the sender gone from every NIC", () -> ClusterStatus.read(dir).nodes().stream()
                .allMatch(n -> n.names().stream().noneMatch(e -> e.name().equals(senderName))));

            final ReceiveStatus status = new ReceiveStatus();
            try (QnixBuffer in = receiver.allocateBuffer(length))
            {
                in.lock();
                final int first = receiver.recvContext(senderName, 5, true, in, 0, length);
                receiver.receive(first);
                receiver.waitForReceive(first, status, TIMEOUT_S, TimeUnit.SECONDS);
                assertEquals(length, status.length());
                assertEquals(senderName, status.source());
                for (int i = 0; i < length; i++)
                {
                    assertEquals((byte)(i * 7), in.buffer().getByte(i), "byte " + i);
                }
                final int second = receiver.recvContext(senderName, Qnix.ANY_TAG, true, in, 0, length);
                receiver.receive(second);
                receiver.waitForReceive(second, status, TIMEOUT_S, TimeUnit.SECONDS);
                assertEquals(6, status.tag());
                assertEquals(100, status.length());

                // Nothing more of it anywhere: a Receive naming it ends at once.
                final int third = receiver.recvContext(senderName, Qnix.ANY_TAG, true, in, 0, length);
                receiver.receive(third);
                assertThrows(QnixPeerGoneException.class,
                    () -> receiver.waitForReceive(third, status, TIMEOUT_S, TimeUnit.SECONDS));
            }
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
