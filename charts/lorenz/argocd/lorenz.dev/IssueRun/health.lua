-- Argo CD health of a Lorenz IssueRun, from the conditions the controller writes.
-- Healthy: it succeeded. Degraded: it failed, or it cannot go on (Stalled=True: its
-- Workflow is missing or invalid, a Pod it may not create). Suspended: its Workflow is
-- suspended. Progressing: anything else, including a status older than the spec.
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
local succeeded = condition(conditions, "Succeeded")
local finished = condition(conditions, "Finished")
local stalled = condition(conditions, "Stalled")
if finished ~= nil and finished.status == "True" then
  if succeeded ~= nil and succeeded.status == "True" then
    hs.status = "Healthy"
  else
    hs.status = "Degraded"
  end
  hs.message = finished.reason .. ": " .. (finished.message or "")
  return hs
end
if stalled ~= nil and stalled.status == "True" then
  if stalled.reason == "WorkflowSuspended" then
    hs.status = "Suspended"
  else
    hs.status = "Degraded"
  end
  hs.message = stalled.reason .. ": " .. (stalled.message or "")
  return hs
end
if succeeded ~= nil then
  if succeeded.reason == "WorkflowSuspended" then hs.status = "Suspended" end
  hs.message = succeeded.reason .. ": " .. (succeeded.message or "")
end
return hs
