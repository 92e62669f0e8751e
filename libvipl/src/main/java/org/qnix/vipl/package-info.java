/**
 * The VI Provider Library (VIPL 1.0, issue 14) on the emulated QNIX NIC: {@code Vip*} functions as Java
 * objects, {@code VipOpenNic} as {@link org.qnix.vipl.Vipl#openNic}. Non-blocking calls return a value
 * or null ({@code NOT_DONE}) or a {@link org.qnix.abi.ViplResult}; the others throw
 * {@link org.qnix.vipl.ViplException} carrying VIPL's code ({@link org.qnix.vipl.ViplNicDeadException}
 * when the NIC's firmware stopped).
 *
 * <ul>
 * <li>NIC ({@link org.qnix.vipl.ViplNic}): {@code VipOpenNic}, {@code VipCloseNic} ({@code close}),
 *     {@code VipQueryNic} ({@code query}: every attribute of {@link org.qnix.vipl.NicAttributes}),
 *     {@code VipErrorCallback} ({@code onError}, an {@link org.qnix.vipl.AsyncErrorHandler} called with
 *     {@link org.qnix.vipl.AsyncError}s from the NIC's async-event ring on a thread of the NIC; the
 *     default prints one line to standard error), the name service {@code VipNSGetHostByName}
 *     ({@code hostByName}) and {@code VipNSGetHostByAddr} ({@code hostByAddress}),
 *     {@code VipQuerySystemManagementInfo} ({@code querySystemManagementInfo}: the cluster's NICs).</li>
 * <li>Protection and memory: {@code VipCreatePtag}/{@code VipDestroyPtag}
 *     ({@link org.qnix.vipl.ProtectionTag}); DMA memory ({@link org.qnix.vipl.ViplMemory});
 *     {@code VipRegisterMem}, {@code VipDeregisterMem}, {@code VipQueryMem},
 *     {@code VipSetMemAttributes} ({@link org.qnix.vipl.MemoryRegion}).</li>
 * <li>VIs ({@link org.qnix.vipl.Vi}): {@code VipCreateVi}, {@code VipDestroyVi}, {@code VipQueryVi};
 *     client/server connection ({@code connectWait} giving a {@link org.qnix.vipl.ConnectionRequest}
 *     to accept or reject, {@code connectRequest}), peer-to-peer ({@code connectPeerRequest},
 *     {@code connectPeerDone}, {@code connectPeerWait}), {@code VipDisconnect}.</li>
 * <li>Data: {@link org.qnix.vipl.Descriptor} (the vipl.h layout in registered memory),
 *     {@code VipPostSend}/{@code VipPostRecv} (bounded by {@code MaxDescriptorsPerQueue}; two threads
 *     may post on one queue), {@code VipSendDone}/{@code VipRecvDone}, {@code VipSendWait}/
 *     {@code VipRecvWait} (with libqnix's wait strategies), {@code VipSendNotify}/{@code VipRecvNotify}
 *     (a handler called once from a library thread).</li>
 * <li>Completion queues ({@link org.qnix.vipl.CompletionQueue}): {@code VipCreateCQ},
 *     {@code VipDestroyCQ}, {@code VipCQDone} (allocation free), {@code VipCQWait}
 *     ({@code await}), {@code VipCQNotify} ({@code notify}), {@code VipResizeCQ} ({@code resize}: the
 *     NIC moves the queued completions to the new ring); an overflow raises an async error.</li>
 * </ul>
 *
 * <pre>{@code
 * try (ViplNic nic = Vipl.openNic("0-0"))
 * {
 *     nic.onError(error -> System.err.println(error.describe()));
 *     ProtectionTag ptag = nic.createPtag();
 *     ViplMemory memory = nic.allocate(64 * 1024);
 *     MemoryRegion region = nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, false, false));
 *     Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 65536, ptag, false, false), null, null);
 *     nic.connectRequest(vi, new ViplAddress(nic.hostByName("node-1-0").node(), "echo".getBytes(US_ASCII)), 10_000);
 * }
 * }</pre>
 */
package org.qnix.vipl;
