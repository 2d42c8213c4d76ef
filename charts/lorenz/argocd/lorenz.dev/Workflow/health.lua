-- Argo CD health of a Lorenz Workflow, from the conditions the controller writes.
-- Degraded: the spec as written is not in force (Stalled=True: it does not load, and runs
-- start from the last good one if there is one). Suspended: spec.suspend. Healthy: Ready.
-- Progressing: not reconciled yet, or a status older than the spec.
local hs = { status = "Progressing", message = "waiting for the controller" }
local function condition(conditions, kind)
  for _, c in ipairs(conditions) do
    if c.type == kind then return c end
  end
  return nil
end
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and observed ~= nil and observed < generation then
  hs.message = "the controller has not seen the latest spec yet"
  return hs
end
local conditions = obj.status.conditions
local stalled = condition(conditions, "Stalled")
local ready = condition(conditions, "Ready")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.reason .. ": " .. (stalled.message or "")
  return hs
end
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true: no new runs start"
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or ""
  return hs
end
if ready ~= nil then
  hs.message = ready.reason .. ": " .. (ready.message or "")
end
return hs
