-- Wireshark dissector for QNIX emulator traces (`qnix trace -o FILE.pcapng`).
--
-- The capture's link type is LINKTYPE_USER0 (147). Each packet is an 8-byte trace header written by
-- `qnix trace`, then the packet as it was in the NIC input FIFO: the 16-byte QNIX packet header of the
-- thesis (section 3.5; qnix-abi PacketHeader), little-endian, then its payload (cut to the trace's
-- snap length). Layouts: qnix-abi PacketHeader, SystemMessage, TraceLayout.
--
-- Use: wireshark -X lua_script:tools/wireshark/qnix.lua trace.pcapng
--      tshark -X lua_script:tools/wireshark/qnix.lua -r trace.pcapng -V

local qnix = Proto("qnix", "QNIX emulated NIC")

local directions = { [1] = "sent", [2] = "taken" }
local wire_types = { [1] = "Data packet", [2] = "System message", [3] = "VIA packet" }
local system_messages = {
    [1] = "Permission_Request", [2] = "Permission_Reply", [3] = "New_Process", [4] = "New_Process_Ack",
    [5] = "New_Group", [6] = "New_Group_Ack", [7] = "Barrier", [8] = "Delete_Process", [9] = "Transfer_Abort",
    [10] = "Eager_Short", [11] = "Eager_Short_Reply"
}
local reply_status = { [0] = "granted" }

local f = qnix.fields
f.direction = ProtoField.uint8("qnix.direction", "Direction", base.DEC, directions)
f.wire_type = ProtoField.uint8("qnix.type", "Wire message type", base.DEC, wire_types)
f.node = ProtoField.string("qnix.node", "Capturing NIC")
f.destination = ProtoField.string("qnix.dst", "Destination NIC")
f.receiver_pid = ProtoField.uint16("qnix.receiver_pid", "Receiver Process PID")
f.source = ProtoField.string("qnix.src", "Source NIC")
f.sender_pid = ProtoField.uint16("qnix.sender_pid", "Sender Process PID")
f.context_tag = ProtoField.uint16("qnix.tag", "Context Tag")
f.transfer = ProtoField.uint16("qnix.transfer", "Transfer handle")
f.system = ProtoField.uint16("qnix.system", "System message", base.DEC, system_messages)
f.length = ProtoField.uint32("qnix.length", "Payload length")
f.counter = ProtoField.uint16("qnix.counter", "Packet counter")
f.ai = ProtoField.int32("qnix.ai", "AI")
f.pi = ProtoField.int32("qnix.pi", "PI")
f.nic_pid = ProtoField.int32("qnix.nic_pid", "NIC PID")
f.os_pid = ProtoField.int32("qnix.os_pid", "OS pid")
f.group = ProtoField.int32("qnix.group", "Group")
f.group_size = ProtoField.int32("qnix.group_size", "Group size")
f.sequence = ProtoField.int32("qnix.barrier_sequence", "Barrier sequence")
f.req_receiver = ProtoField.int32("qnix.req.receiver_pid", "Receiver PID")
f.req_sender = ProtoField.int32("qnix.req.sender_pid", "Sender PID")
f.req_tag = ProtoField.int32("qnix.req.tag", "Tag")
f.req_length = ProtoField.int32("qnix.req.message_length", "Message length")
f.req_first = ProtoField.int32("qnix.req.first_packet_length", "First packet length")
f.req_packets = ProtoField.int32("qnix.req.packets", "Packets")
f.operation = ProtoField.uint64("qnix.operation", "Operation id")
f.req_incarnation = ProtoField.int32("qnix.req.receiver_incarnation", "Receiver incarnation")
f.req_retry = ProtoField.int32("qnix.req.retry_ms", "Asks again within (ms)")
f.status = ProtoField.int32("qnix.reply.status", "Status")
f.handle = ProtoField.int32("qnix.reply.handle", "Transfer handle")
f.data = ProtoField.bytes("qnix.data", "Data")

local function coordinates(packed)
    return string.format("%d-%d", bit.band(bit.rshift(packed, 8), 0xFF), bit.band(packed, 0xFF))
end

local function name(tree, tvb, at)
    tree:add_le(f.ai, tvb(at, 4))
    tree:add_le(f.pi, tvb(at + 4, 4))
    return string.format("(%d,%d)", tvb(at, 4):le_int(), tvb(at + 4, 4):le_int())
end

-- One dissector per system message, over its payload (qnix-abi SystemMessage offsets).
local function system_message(code, payload, tree)
    local n = payload:len()
    -- Eager_Short (10): Permission_Request's fields, then the message's bytes from offset 48
    -- (SystemMessage.EAGER_SHORT_DATA_OFFSET).
    if (code == 1 or code == 10) and n >= 40 then
        tree:add_le(f.req_receiver, payload(0, 4))
        tree:add_le(f.req_sender, payload(4, 4))
        tree:add_le(f.req_tag, payload(8, 4))
        tree:add_le(f.req_length, payload(12, 4))
        tree:add_le(f.req_first, payload(16, 4))
        tree:add_le(f.req_packets, payload(20, 4))
        tree:add_le(f.operation, payload(24, 8))
        local sender = name(tree, payload, 32)
        if n >= 44 then
            tree:add_le(f.req_incarnation, payload(40, 4))
        end
        if code == 1 and n >= 48 then
            tree:add_le(f.req_retry, payload(44, 4))
        end
        if code == 10 and n > 48 then
            tree:add(payload(48, n - 48), "Data (" .. (n - 48) .. " bytes)")
        end
        return string.format("%d bytes, tag %d, from %s", payload(12, 4):le_int(), payload(8, 4):le_int(), sender)
    elseif (code == 2 or code == 9 or code == 11) and n >= 24 then
        tree:add_le(f.req_receiver, payload(0, 4))
        tree:add_le(f.req_sender, payload(4, 4))
        tree:add_le(f.operation, payload(8, 8))
        tree:add_le(f.status, payload(16, 4))
        tree:add_le(f.handle, payload(20, 4))
        return string.format("status %d, handle %d", payload(16, 4):le_int(), payload(20, 4):le_int())
    elseif (code == 3 or code == 4 or code == 8) and n >= 12 then
        local who = name(tree, payload, 0)
        tree:add_le(f.nic_pid, payload(8, 4))
        if code == 3 and n >= 24 then
            tree:add_le(f.os_pid, payload(12, 4))
            tree:add_le(f.group, payload(16, 4))
            tree:add_le(f.group_size, payload(20, 4))
        end
        return who
    elseif (code == 5 or code == 7) and n >= 20 then
        tree:add_le(f.group, payload(0, 4))
        tree:add_le(f.group_size, payload(4, 4))
        local at = 8
        if code == 7 then
            tree:add_le(f.sequence, payload(8, 4))
            at = 12
        end
        if n >= at + 12 then
            local member = name(tree, payload, at)
            tree:add_le(f.nic_pid, payload(at + 8, 4))
            return string.format("group %d, member %s", payload(0, 4):le_int(), member)
        end
        return string.format("group %d", payload(0, 4):le_int())
    elseif code == 6 and n >= 8 then
        tree:add_le(f.group, payload(0, 4))
        tree:add_le(f.nic_pid, payload(4, 4))
        return string.format("group %d", payload(0, 4):le_int())
    end
    return ""
end

function qnix.dissector(tvb, pinfo, root)
    if tvb:len() < 24 then
        return 0
    end
    pinfo.cols.protocol = "QNIX"
    local tree = root:add(qnix, tvb())
    local direction = tvb(0, 1):uint()
    local wire_type = tvb(1, 1):uint()
    tree:add(f.direction, tvb(0, 1))
    tree:add(f.wire_type, tvb(1, 1))
    tree:add(f.node, tvb(2, 2), coordinates(tvb(2, 2):le_uint()))

    local h = tvb(8, 16):tvb()
    local header = tree:add(qnix, tvb(8, 16), "Packet header")
    local destination = coordinates(h(0, 2):le_uint())
    local source = coordinates(h(4, 2):le_uint())
    header:add(f.destination, h(0, 2), destination)
    header:add_le(f.receiver_pid, h(2, 2))
    header:add(f.source, h(4, 2), source)
    header:add_le(f.sender_pid, h(6, 2))
    local tag = h(8, 2):le_uint()
    if wire_type == 2 then
        header:add_le(f.system, h(8, 2))
    else
        header:add_le(f.transfer, h(8, 2))
    end
    header:add_le(f.length, h(10, 4))
    header:add_le(f.counter, h(14, 2))

    pinfo.cols.src = source
    pinfo.cols.dst = destination
    local info
    local has_payload = tvb:len() > 24
    if wire_type == 2 then
        local what = system_messages[tag] or string.format("system message %d", tag)
        info = what
        if has_payload then
            local body = tree:add(qnix, tvb(24), what)
            info = what .. " " .. system_message(tag, tvb(24):tvb(), body)
        end
    else
        info = string.format("%s: transfer %d, packet %d, %d bytes", wire_types[wire_type] or "type " .. wire_type,
            tag, h(14, 2):le_uint(), h(10, 4):le_uint())
        if has_payload then
            tree:add(f.data, tvb(24))
        end
    end
    pinfo.cols.info = string.format("[%s %s] %s", coordinates(tvb(2, 2):le_uint()), directions[direction] or "?", info)
    return tvb:len()
end

local encaps = wtap_encaps or wtap
DissectorTable.get("wtap_encap"):add(encaps.USER0, qnix)
