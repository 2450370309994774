package redisbloom

import "github.com/redis/go-redis/v9"

// Replies the scripts give as errors, mapped to the sentinels by opError.
// Each is a Redis error code followed by a space and the detail.
const (
	codeNotFound = "BLOOMNOTFOUND"
	codeConflict = "BLOOMCONFLICT"
	codeCorrupt  = "BLOOMCORRUPT"
)

// metaScript opens, creates, imports into or exports a filter.
//
//	KEYS: meta, bits, tmp (tmp only for import)
//	ARGV: mode ("open", "create", "import", "export"), format, m, k, n, p,
//	      bitmap (import only)
//
// It replies {status, format, m, k, n, p[, bitmap]} with the stored values:
// status "created", "exists" or, for create and import, "conflict" when the
// stored format, m or k differ from ARGV — in which case it changed nothing.
// Export appends the bitmap. Comparing inside the script is what makes two
// replicas creating the same filter at once agree on one set of parameters.
var metaScript = redis.NewScript(`
local mode = ARGV[1]
local cur = redis.call('HMGET', KEYS[1], 'format', 'm', 'k', 'n', 'p')
local status
if redis.call('EXISTS', KEYS[1]) == 1 then
  if not (cur[1] and cur[2] and cur[3] and cur[4] and cur[5]) then
    return redis.error_reply('` + codeCorrupt + ` meta key ' .. KEYS[1] .. ' lacks one of the fields format, m, k, n, p')
  end
  local t = redis.call('TYPE', KEYS[2]).ok
  if t == 'none' then
    return redis.error_reply('` + codeCorrupt + ` bits key ' .. KEYS[2] .. ' is missing (deleted or evicted)')
  end
  if t ~= 'string' then
    return redis.error_reply('WRONGTYPE bits key ' .. KEYS[2] .. ' holds a ' .. t .. ', not a string')
  end
  status = 'exists'
  if mode == 'create' or mode == 'import' then
    if cur[1] ~= ARGV[2] or cur[2] ~= ARGV[3] or cur[3] ~= ARGV[4] then
      return {'conflict', cur[1], cur[2], cur[3], cur[4], cur[5]}
    end
  end
else
  if mode == 'open' or mode == 'export' then
    return redis.error_reply('` + codeNotFound + ` no key ' .. KEYS[1])
  end
  if redis.call('EXISTS', KEYS[2]) == 1 then
    return redis.error_reply('` + codeCorrupt + ` key ' .. KEYS[2] .. ' exists without its meta key ' .. KEYS[1] .. '; delete it or choose another name')
  end
  redis.call('HSET', KEYS[1], 'format', ARGV[2], 'm', ARGV[3], 'k', ARGV[4], 'n', ARGV[5], 'p', ARGV[6])
  redis.call('SET', KEYS[2], '')
  cur = {ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]}
  status = 'created'
end
if mode == 'import' and #ARGV[7] > 0 then
  redis.call('SET', KEYS[3], ARGV[7])
  redis.call('BITOP', 'OR', KEYS[2], KEYS[2], KEYS[3])
  redis.call('DEL', KEYS[3])
end
local reply = {status, cur[1], cur[2], cur[3], cur[4], cur[5]}
if mode == 'export' then
  reply[7] = redis.call('GET', KEYS[2])
end
return reply
`)

// opScript adds, tests, or tests and adds the items whose bit positions it
// is given, or counts the bits set, after checking that the filter is still
// the one the handle opened.
//
//	KEYS: meta, bits
//	ARGV: m, k, mode ("add", "get", "test", "count"), then k positions per
//	      item (none for "count")
//
// It replies, for "get" and "test", one integer per item: 1 if all its k
// bits were set (before this call, for "test"), else 0; for "add", an empty
// array; for "count", the BITCOUNT of the bits key. BITFIELD SET returns
// each bit's old value, so a test-and-add is one command. Positions go to
// BITFIELD 1024 at a time because Lua's unpack takes at most about 8000
// values.
var opScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'm', 'k')
if not cur[1] or not cur[2] then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return redis.error_reply('` + codeNotFound + ` no key ' .. KEYS[1])
  end
  return redis.error_reply('` + codeCorrupt + ` meta key ' .. KEYS[1] .. ' lacks field m or k')
end
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then
  return redis.error_reply('` + codeConflict + ` the filter now has m=' .. cur[1] .. ' k=' .. cur[2] .. ', this handle opened m=' .. ARGV[1] .. ' k=' .. ARGV[2])
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  return redis.error_reply('` + codeCorrupt + ` bits key ' .. KEYS[2] .. ' is missing (deleted or evicted)')
end
local k = tonumber(ARGV[2])
local mode = ARGV[3]
if mode == 'count' then
  return redis.call('BITCOUNT', KEYS[2])
end
local out, set, seen = {}, 1, 0
local last = #ARGV
local i = 4
while i <= last do
  local e = math.min(i + 1023, last)
  local args, n = {}, 0
  local bits
  if mode == 'get' then
    for j = i, e do
      args[n+1] = 'GET'; args[n+2] = 'u1'; args[n+3] = ARGV[j]; n = n + 3
    end
    bits = redis.call('BITFIELD_RO', KEYS[2], unpack(args))
  else
    for j = i, e do
      args[n+1] = 'SET'; args[n+2] = 'u1'; args[n+3] = ARGV[j]; args[n+4] = '1'; n = n + 4
    end
    bits = redis.call('BITFIELD', KEYS[2], unpack(args))
  end
  if mode ~= 'add' then
    for j = 1, #bits do
      if bits[j] == 0 then set = 0 end
      seen = seen + 1
      if seen == k then
        out[#out+1] = set
        set, seen = 1, 0
      end
    end
  end
  i = e + 1
end
return out
`)
